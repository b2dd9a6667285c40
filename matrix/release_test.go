package matrix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/smoothanon/smoothanon/storage"
)

// readRelease reads the rows of a release into a matrix.
func readRelease(spec string, opts ReleaseOptions) (*Matrix, error) {
	m := New(0, 0)
	err := ReadRelease(spec, opts, func(u string, f []uint32) error {
		m.Append(u, f)
		return nil
	})
	return m, err
}

// sized writes m to uri with md, padded through the metadata so that the
// file has exactly size bytes (a tampered shard that keeps its size).
func sized(t *testing.T, uri string, m *Matrix, md map[string]string, size int64) {
	t.Helper()
	pad := 0
	for range 20 {
		meta := map[string]string{"pad": strings.Repeat("x", pad)}
		for k, v := range md {
			meta[k] = v
		}
		if err := WriteMatrix(uri, m, WriterOptions{Metadata: meta}); err != nil {
			t.Fatal(err)
		}
		a, err := storage.Stat(context.Background(), uri)
		if err != nil {
			t.Fatal(err)
		}
		if a.Size == size {
			return
		}
		pad += int(size - a.Size)
		if pad < 0 {
			t.Fatalf("cannot pad %s down to %d bytes", uri, size)
		}
	}
	t.Fatalf("could not make %s exactly %d bytes", uri, size)
}

// TestReadRelease: a directory release reads exactly its manifest's
// shards in order (a stray file beside them is no part of it), with the
// manifest's key fingerprint and user id mode; version 1 manifests and
// single files, with or without the marker, read too.
func TestReadRelease(t *testing.T) {
	forEachStore(t, func(t *testing.T, store, root string) {
		a, b := rowsMatrix("a", 5), rowsMatrix("b", 3)
		dir := storage.Join(root, "rel")
		testRelease(t, dir, 2, releaseMeta("00ff00ff00ff00ff"), a, b)
		if err := WriteMatrix(storage.Join(dir, "stray.parquet"), rowsMatrix("s", 2), WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []ReleaseOptions{{}, {VerifyChecksums: true}} {
			r, err := OpenRelease(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Manifest == nil || len(r.Files) != 2 || r.Rows != 8 || r.KeyFingerprint != "00ff00ff00ff00ff" || r.UserIDs != "pseudonym" {
				t.Fatalf("OpenRelease = %+v", r)
			}
			got, err := readRelease(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if want := append(append([]string{}, a.Users...), b.Users...); strings.Join(got.Users, ",") != strings.Join(want, ",") {
				t.Fatalf("rows %v, want %v", got.Users, want)
			}
		}

		v1 := storage.Join(root, "v1")
		testRelease(t, v1, 1, map[string]string{MetaUserIDs: "pseudonym"}, a, b)
		r, err := OpenRelease(v1, ReleaseOptions{VerifyChecksums: true})
		if err != nil || r.Rows != 8 || r.KeyFingerprint != "" || r.UserIDs != "pseudonym" || r.Manifest.Version != 1 {
			t.Fatalf("version 1: %+v, %v", r, err)
		}

		single := storage.Join(root, "single.parquet")
		if err := WriteMatrix(single, a, WriterOptions{Metadata: releaseMeta("1234567812345678")}); err != nil {
			t.Fatal(err)
		}
		old := storage.Join(root, "old.parquet")
		if err := WriteMatrix(old, b, WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			spec, fp, ids string
			rows          int64
		}{{single, "1234567812345678", "pseudonym", 5}, {old, "", "keep", 3}} {
			r, err := OpenRelease(c.spec, ReleaseOptions{VerifyChecksums: true})
			if err != nil || r.Manifest != nil || len(r.Files) != 1 || r.Rows != c.rows || r.KeyFingerprint != c.fp || r.UserIDs != c.ids {
				t.Fatalf("single file %s: %+v, %v", c.spec, r, err)
			}
			if m, err := readRelease(c.spec, ReleaseOptions{}); err != nil || int64(m.NumRows()) != c.rows {
				t.Fatalf("single file %s: read %v", c.spec, err)
			}
		}
	})
}

// TestReleaseRefusals: each spec that is not a whole published release,
// and each shard that is not as the manifest says, is refused with one
// line naming the path and both values.
func TestReleaseRefusals(t *testing.T) {
	forEachStore(t, func(t *testing.T, store, root string) {
		ctx := context.Background()
		md := releaseMeta("00ff00ff00ff00ff")
		// b's long ids leave room to pad smaller files up to its size.
		a, b := rowsMatrix("a", 5), rowsMatrix(strings.Repeat("b", 40), 3)
		// fresh writes a release and returns it with its second shard.
		n := 0
		fresh := func() (string, string, *storage.Manifest) {
			n++
			dir := storage.Join(root, fmt.Sprintf("rel%d", n))
			m := testRelease(t, dir, 2, md, a, b)
			return dir, storage.Join(dir, m.Shards[1].Name), m
		}
		// Every check is made by OpenRelease, before any row is read.
		shardErr := func(dir, shard string, opts ReleaseOptions, want string) {
			t.Helper()
			_, err := OpenRelease(dir, opts)
			if err == nil || err.Error() != want || !errors.Is(err, ErrShardMismatch) {
				t.Errorf("got %v, want %q", err, want)
			}
		}

		// Not a release spec.
		dir, shard, _ := fresh()
		for _, c := range []struct{ spec, want string }{
			{storage.Join(dir, "*.parquet"), "name the release directory, not its shards"},
			{shard + "," + shard, "name the release directory, not its shards"},
			{shard, shard + ": is a shard of the release " + storage.Clean(dir) + " (it holds _SUCCESS): name the release directory, not its shards"},
			{storage.Join(root, "missing"), storage.Join(root, "missing") + ": no such"},
		} {
			if _, err := OpenRelease(c.spec, ReleaseOptions{}); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("OpenRelease(%s) = %v, want %q", c.spec, err, c.want)
			}
		}
		storage.Remove(ctx, storage.Join(dir, storage.SuccessName))
		if _, err := OpenRelease(dir, ReleaseOptions{}); !errors.Is(err, storage.ErrNotRelease) || err.Error() != storage.Clean(dir)+": not a published release: no _SUCCESS" {
			t.Errorf("no _SUCCESS: %v", err)
		}

		// A missing shard.
		dir, shard, _ = fresh()
		storage.Remove(ctx, shard)
		shardErr(dir, shard, ReleaseOptions{}, shard+": shard listed in _SUCCESS is missing")

		// Replaced by another valid Parquet file of another size.
		dir, shard, m := fresh()
		if err := WriteMatrix(shard, rowsMatrix("b", 30), WriterOptions{Metadata: md}); err != nil {
			t.Fatal(err)
		}
		sz, _ := storage.Stat(ctx, shard)
		shardErr(dir, shard, ReleaseOptions{}, fmt.Sprintf("%s: size %d, _SUCCESS says %d", shard, sz.Size, m.Shards[1].Size))

		// The same size, other rows.
		dir, shard, m = fresh()
		sized(t, shard, rowsMatrix("b", 2), md, m.Shards[1].Size)
		shardErr(dir, shard, ReleaseOptions{}, fmt.Sprintf("%s: rows 2, _SUCCESS says 3", shard))

		// The same size and rows, other bytes: the CRC-32C tells, from the
		// store's attributes where it keeps one (GCS, and S3 for our
		// uploads), by reading the file elsewhere when asked to verify
		// checksums.
		dir, shard, m = fresh()
		other := rowsMatrix("c", 3)
		sized(t, shard, other, md, m.Shards[1].Size)
		want := fmt.Sprintf("%s: CRC32C 0x%08x, _SUCCESS says 0x%08x", shard, crcOf(t, shard), *m.Shards[1].CRC32C)
		attrs, _ := storage.Stat(ctx, shard)
		if attrs.HasCRC32C != (store != "local") {
			t.Fatalf("%s keeps a CRC-32C: %v", store, attrs.HasCRC32C)
		}
		if attrs.HasCRC32C {
			shardErr(dir, shard, ReleaseOptions{}, want)
		} else if _, err := readRelease(dir, ReleaseOptions{}); err != nil {
			t.Errorf("without a stored CRC-32C or VerifyChecksums, size and rows are all that is checked: %v", err)
		}
		shardErr(dir, shard, ReleaseOptions{VerifyChecksums: true}, want)

		// Replaced after the release was opened: Read checks each file's
		// size and rows again as it opens it.
		dir, shard, m = fresh()
		r, err := OpenRelease(dir, ReleaseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sized(t, shard, rowsMatrix("b", 2), md, m.Shards[1].Size)
		if err := r.Read(func(string, []uint32) error { return nil }); err == nil || err.Error() != shard+": rows 2, _SUCCESS says 3" {
			t.Errorf("Read after a replacement: %v", err)
		}

		// A shard under another key.
		dir, shard, _ = fresh()
		if err := WriteMatrix(shard, b, WriterOptions{Metadata: releaseMeta("1111111111111111")}); err != nil {
			t.Fatal(err)
		}
		mf, _ := storage.ReadManifest(ctx, dir)
		sz, _ = storage.Stat(ctx, shard)
		mf.Shards[1].Size, mf.Shards[1].CRC32C = sz.Size, nil
		storage.WriteManifest(ctx, dir, mf)
		shardErr(dir, shard, ReleaseOptions{}, shard+": key fingerprint 1111111111111111, _SUCCESS says 00ff00ff00ff00ff")

		// A shard with kept ids in a pseudonymized release.
		dir, shard, _ = fresh()
		if err := WriteMatrix(shard, b, WriterOptions{Metadata: map[string]string{MetaRelease: ReleaseFormat}}); err != nil {
			t.Fatal(err)
		}
		mf, _ = storage.ReadManifest(ctx, dir)
		sz, _ = storage.Stat(ctx, shard)
		mf.Shards[1].Size, mf.Shards[1].CRC32C = sz.Size, nil
		storage.WriteManifest(ctx, dir, mf)
		shardErr(dir, shard, ReleaseOptions{}, shard+": user ids keep, _SUCCESS says pseudonym")

		// A manifest naming a file outside its directory, or miscounting.
		dir, _, _ = fresh()
		mf, _ = storage.ReadManifest(ctx, dir)
		mf.Shards[0].Name = "../in.parquet"
		storage.WriteManifest(ctx, dir, mf)
		if _, err := OpenRelease(dir, ReleaseOptions{}); err == nil || !strings.Contains(err.Error(), `_SUCCESS: bad manifest: shard "../in.parquet" is not a file of the release directory`) {
			t.Errorf("shard outside: %v", err)
		}
		dir, _, _ = fresh()
		mf, _ = storage.ReadManifest(ctx, dir)
		mf.TotalRows++
		storage.WriteManifest(ctx, dir, mf)
		if _, err := OpenRelease(dir, ReleaseOptions{}); err == nil || !strings.HasSuffix(err.Error(), "_SUCCESS: bad manifest: 2 shards with 8 rows, total_rows 9") {
			t.Errorf("total rows: %v", err)
		}
	})
}

// TestReleaseFIFO: a named pipe as a release (or as its shard) is refused
// at once, not opened (which would block until a writer came).
func TestReleaseFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	rel := filepath.Join(dir, "rel")
	m := testRelease(t, rel, 2, releaseMeta("00ff00ff00ff00ff"), rowsMatrix("a", 2))
	shard := filepath.Join(rel, m.Shards[0].Name)
	os.Remove(shard)
	if err := syscall.Mkfifo(shard, 0o644); err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		fifo: fifo + ": is a named pipe, not a regular file",
		rel:  shard + ": is a named pipe, not a regular file",
	} {
		err := within(t, func() error { _, err := readRelease(spec, ReleaseOptions{VerifyChecksums: true}); return err })
		if err == nil || err.Error() != want {
			t.Errorf("ReadRelease(%s) = %v, want %q", spec, err, want)
		}
	}
}

// TestReleaseUTF8: a release is read by the input's reader: a user id that
// is not valid UTF-8 is refused there too, without its bytes.
func TestReleaseUTF8(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.parquet")
	writeRows(t, p, []parquetRow{{"ok", []uint32{1}}, {"s\xffcret", []uint32{2}}})
	want := p + ": row 1: column user_id: not valid UTF-8"
	if err := ReadRelease(p, ReleaseOptions{}, func(string, []uint32) error { return nil }); err == nil || err.Error() != want {
		t.Errorf("ReadRelease: %v, want %q", err, want)
	}
}
