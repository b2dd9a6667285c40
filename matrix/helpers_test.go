package matrix

import (
	"context"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// rowsMatrix builds a matrix of n users <prefix>0.. with one feature each.
func rowsMatrix(prefix string, n int) *Matrix {
	m := New(n, n)
	for i := range n {
		m.Append(fmt.Sprintf("%s%d", prefix, i), []uint32{uint32(i % 3)})
	}
	return m
}

// forEachStore runs fn on a fresh directory URI of each store the readers
// must handle alike: the local disk and, through their emulators, GCS and
// S3.
func forEachStore(t *testing.T, fn func(t *testing.T, store, root string)) {
	roots := map[string]func(t *testing.T) string{
		"local": func(t *testing.T) string { return t.TempDir() },
		"gs": func(t *testing.T) string {
			storagetest.StartGCS(t, "bkt")
			return "gs://bkt/d"
		},
		"s3": func(t *testing.T) string {
			storagetest.StartS3(t, "bkt")
			return "s3://bkt/d"
		},
	}
	for _, store := range []string{"local", "gs", "s3"} {
		t.Run(store, func(t *testing.T) { fn(t, store, roots[store](t)) })
	}
}

// releaseMeta is the metadata of a pseudonymized release's files under
// the key of fingerprint fp.
func releaseMeta(fp string) map[string]string {
	return map[string]string{MetaRelease: ReleaseFormat, MetaKeyFingerprint: fp, MetaUserIDs: "pseudonym"}
}

// crcOf is the CRC-32C of the file uri.
func crcOf(t *testing.T, uri string) uint32 {
	t.Helper()
	b, err := storage.ReadFile(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
}

// testRelease writes a directory release of the shards into dir, as a
// publish does: shards carrying md, and the manifest last; version 2 has
// shard names with a run token and CRC-32Cs, version 1 neither (nor the
// key fingerprint and user id mode).
func testRelease(t *testing.T, dir string, version int, md map[string]string, shards ...*Matrix) *storage.Manifest {
	t.Helper()
	ctx := context.Background()
	storage.MkdirAll(dir)
	m := &storage.Manifest{Version: version, RunID: "r1", UserIDs: md[MetaUserIDs], KeyFingerprint: md[MetaKeyFingerprint]}
	if version == 1 {
		m.UserIDs, m.KeyFingerprint = "", ""
	}
	for i, sm := range shards {
		name := fmt.Sprintf("part-%05d-of-%05d-0123456789ab.parquet", i, len(shards))
		if version == 1 {
			name = fmt.Sprintf("part-%05d-of-%05d.parquet", i, len(shards))
		}
		uri := storage.Join(dir, name)
		if err := WriteMatrix(uri, sm, WriterOptions{Metadata: md}); err != nil {
			t.Fatal(err)
		}
		a, err := storage.Stat(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		s := storage.Shard{Name: name, Size: a.Size, Rows: int64(sm.NumRows())}
		if version >= 2 {
			crc := crcOf(t, uri)
			s.CRC32C = &crc
		}
		m.Shards = append(m.Shards, s)
		m.TotalRows += s.Rows
	}
	if err := storage.WriteManifest(ctx, dir, m); err != nil {
		t.Fatal(err)
	}
	return m
}
