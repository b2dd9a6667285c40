package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// root returns a writable directory URI on each store, its emulator
// started for the test.
func roots(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"local": func(t *testing.T) string { return t.TempDir() },
		"memfs": func(t *testing.T) string { return "memfs://" + strings.ReplaceAll(t.Name(), "/", "_") },
		"gs": func(t *testing.T) string {
			storagetest.StartGCS(t, "bkt")
			return "gs://bkt/dir"
		},
		"s3": func(t *testing.T) string {
			storagetest.StartS3(t, "bkt")
			return "s3://bkt/dir"
		},
	}
}

func forEachStore(t *testing.T, fn func(t *testing.T, root string)) {
	for name, mk := range roots(t) {
		t.Run(name, func(t *testing.T) { fn(t, mk(t)) })
	}
}

func TestWriteListReadRemove(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, root string) {
		data := bytes.Repeat([]byte("0123456789"), 1000)
		for _, name := range []string{"a.parquet", "b.parquet", "c.txt"} {
			if err := storage.WriteFile(ctx, storage.Join(root, name), data); err != nil {
				t.Fatal(err)
			}
		}
		if err := storage.WriteFile(ctx, storage.Join(root, "sub", "d.parquet"), data); err != nil && !storage.IsLocal(root) {
			t.Fatal(err)
		}
		got, err := storage.List(ctx, storage.Join(root, "*.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{storage.Join(root, "a.parquet"), storage.Join(root, "b.parquet")}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("List = %q, want %q (* must not cross /)", got, want)
		}
		// Directory, glob and comma list, as matrix.ListFiles takes them.
		for _, spec := range []string{root, storage.Join(root, "*.parquet"), want[1] + "," + want[0] + "," + want[0]} {
			files, err := storage.Expand(ctx, spec, ".parquet")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(files, ",") != strings.Join(want, ",") {
				t.Fatalf("Expand(%s) = %q, want %q", spec, files, want)
			}
		}

		f, err := storage.Open(ctx, want[0])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.Size() != int64(len(data)) {
			t.Fatalf("size %d, want %d", f.Size(), len(data))
		}
		p := make([]byte, 7)
		if n, err := f.ReadAt(p, 1003); err != nil || n != 7 || string(p) != "3456789" {
			t.Fatalf("ReadAt = %d %v %q", n, err, p)
		}
		if n, err := f.ReadAt(p, int64(len(data))-3); err != io.EOF || n != 3 || string(p[:3]) != "789" {
			t.Fatalf("ReadAt at the end = %d %v %q", n, err, p[:3])
		}

		if err := storage.Copy(ctx, want[0], storage.Join(root, "copy.bin")); err != nil {
			t.Fatal(err)
		}
		if b, err := storage.ReadFile(ctx, storage.Join(root, "copy.bin")); err != nil || !bytes.Equal(b, data) {
			t.Fatalf("copy read back: %v", err)
		}
		if err := storage.RemoveAll(ctx, root); err != nil {
			t.Fatal(err)
		}
		if left, _ := storage.ListTree(ctx, root); len(left) != 0 {
			t.Fatalf("left after RemoveAll: %q", left)
		}
	})
}

func TestWriterAbortLeavesNothing(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, root string) {
		uri := storage.Join(root, "x.parquet")
		w, err := storage.Create(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("partial"))
		if ok, _ := storage.Exists(ctx, uri); ok {
			t.Fatal("object visible before Close")
		}
		w.Abort()
		if ok, err := storage.Exists(ctx, uri); ok || err != nil {
			t.Fatalf("after Abort: exists=%v err=%v", ok, err)
		}
		if left, _ := storage.ListTree(ctx, root); len(left) != 0 {
			t.Fatalf("left after Abort: %q", left)
		}
	})
}

// A rewrite of the object between two ranged reads fails the second with
// ErrChanged: the reader is pinned to the generation (GCS) or ETag (S3).
func TestChangedWhileReading(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			root := roots(t)[store](t)
			uri := storage.Join(root, "f.parquet")
			if err := storage.WriteFile(ctx, uri, []byte("first version")); err != nil {
				t.Fatal(err)
			}
			f, err := storage.Open(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			p := make([]byte, 5)
			if _, err := f.ReadAt(p, 0); err != nil {
				t.Fatal(err)
			}
			if err := storage.WriteFile(ctx, uri, []byte("second version")); err != nil {
				t.Fatal(err)
			}
			_, err = f.ReadAt(p, 6)
			if !errors.Is(err, storage.ErrChanged) || !strings.HasPrefix(err.Error(), uri+": object changed while reading") {
				t.Fatalf("read after rewrite: %v, want %s: object changed while reading", err, uri)
			}
		})
	}
}

func TestMissing(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			root := roots(t)[store](t)
			missingObj := storage.Join(root, "nope.parquet")
			missingBucket := store + "://no-such-bucket/x.parquet"
			for _, c := range []struct {
				uri  string
				want error
				text string
			}{
				{missingObj, storage.ErrNotExist, "no such object"},
				{missingBucket, storage.ErrNoBucket, "no such bucket"},
			} {
				_, err := storage.Open(ctx, c.uri)
				if !errors.Is(err, c.want) || err.Error() != c.uri+": "+c.text {
					t.Errorf("Open(%s) = %v, want %q", c.uri, err, c.uri+": "+c.text)
				}
				_, err = storage.Expand(ctx, c.uri, ".parquet")
				if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), c.uri+": "+c.text) {
					t.Errorf("Expand(%s) = %v, want %q", c.uri, err, c.uri+": "+c.text)
				}
			}
		})
	}
}

// A directory of shards without _SUCCESS is an interrupted publish and is
// refused; with it, the manifest's shards are the files.
func TestExpandRelease(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, root string) {
		dir := storage.Join(root, "rel")
		storage.MkdirAll(dir)
		for _, n := range []string{"part-00000-of-00002.parquet", "part-00001-of-00002.parquet"} {
			if err := storage.WriteFile(ctx, storage.Join(dir, n), []byte(n)); err != nil {
				t.Fatal(err)
			}
		}
		_, err := storage.Expand(ctx, dir, ".parquet")
		if !errors.Is(err, storage.ErrNotRelease) || err.Error() != storage.Clean(dir)+": not a published release: no _SUCCESS" {
			t.Fatalf("no manifest: %v", err)
		}
		m := &storage.Manifest{Version: storage.ManifestVersion, RunID: "r1", Shards: []storage.Shard{
			{Name: "part-00000-of-00002.parquet"}, {Name: "part-00001-of-00002.parquet"}}}
		if err := storage.WriteManifest(ctx, dir, m); err != nil {
			t.Fatal(err)
		}
		files, err := storage.Expand(ctx, dir, ".parquet")
		if err != nil || len(files) != 2 {
			t.Fatalf("with manifest: %q %v", files, err)
		}
		got, err := storage.ReadManifest(ctx, dir)
		if err != nil || got.RunID != "r1" || len(got.Shards) != 2 {
			t.Fatalf("ReadManifest = %+v, %v", got, err)
		}
		m.Shards = append(m.Shards, storage.Shard{Name: "part-00002-of-00002.parquet"})
		storage.WriteManifest(ctx, dir, m)
		if _, err := storage.Expand(ctx, dir, ".parquet"); err == nil || !strings.Contains(err.Error(), "shard listed in _SUCCESS is missing") {
			t.Fatalf("missing shard: %v", err)
		}
	})
}

func TestJoinSplit(t *testing.T) {
	for _, c := range []struct{ in, dir, base string }{
		{"gs://b/x/y.parquet", "gs://b/x", "y.parquet"},
		{"s3://b/y/", "s3://b", "y"},
		{filepath.Join("a", "b"), "a", "b"},
	} {
		if d, b := storage.Split(c.in); d != c.dir || b != c.base {
			t.Errorf("Split(%s) = %s, %s", c.in, d, b)
		}
	}
	if got := storage.Join("gs://b/x/", "y", "z"); got != "gs://b/x/y/z" {
		t.Errorf("Join = %s", got)
	}
}

// Shard names with and without the run token are shards; anything else
// is not, and a directory of token-named shards without _SUCCESS is an
// interrupted publish.
func TestShardNames(t *testing.T) {
	for name, want := range map[string]bool{
		"part-00000-of-00002.parquet":               true,
		"part-00001-of-00002-0123456789ab.parquet":  true,
		"part-00001-of-00002-0123456789AB.parquet":  false,
		"part-00001-of-00002-0123456789a.parquet":   false,
		"part-00001-of-00002-0123456789abc.parquet": false,
		"part-00000-c000.snappy.parquet":            false,
		"part-0.parquet":                            false,
	} {
		if got := storage.IsShardName(name); got != want {
			t.Errorf("IsShardName(%s) = %v, want %v", name, got, want)
		}
	}
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, root string) {
		dir := storage.Join(root, "rel")
		storage.MkdirAll(dir)
		if err := storage.WriteFile(ctx, storage.Join(dir, "part-00000-of-00001-0123456789ab.parquet"), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := storage.Expand(ctx, dir, ".parquet"); !errors.Is(err, storage.ErrNotRelease) {
			t.Fatalf("token-named shards without _SUCCESS: %v", err)
		}
	})
}

// A named pipe is refused by Expand, named or in a directory, with one
// line: reading it would block.
func TestExpandFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, spec := range []string{fifo, dir, filepath.Join(dir, "*.parquet")} {
		_, err := storage.Expand(context.Background(), spec, ".parquet")
		if want := fifo + ": is a named pipe, not a regular file"; err == nil || err.Error() != want {
			t.Errorf("Expand(%s) = %v, want %q", spec, err, want)
		}
	}
}

// TestListGlobs: * and ? stay within one level, [] is a class, a name
// without glob characters names one object; ListTree goes any depth.
func TestListGlobs(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, root string) {
		names := []string{"a1.parquet", "a2.parquet", "ab.parquet", "a1.parquet.bak", "b/a3.parquet",
			"b/c/a4.parquet", "d/e/f/g/h/i/deep.txt", "x?y", "x*y"}
		if storage.IsLocal(root) {
			for _, n := range names {
				storage.MkdirAll(storage.Join(root, path.Dir(n)))
			}
		}
		for _, n := range names {
			if err := storage.WriteFile(ctx, storage.Join(root, n), []byte(n)); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			glob string
			want []string
		}{
			{"a?.parquet", []string{"a1.parquet", "a2.parquet", "ab.parquet"}},
			{"a[0-9].parquet", []string{"a1.parquet", "a2.parquet"}},
			{"*.parquet", []string{"a1.parquet", "a2.parquet", "ab.parquet"}},
			{"*/a*.parquet", []string{"b/a3.parquet"}},
			{"b/*/*.parquet", []string{"b/c/a4.parquet"}},
			{"a1.parquet", []string{"a1.parquet"}},
			{"a1.parq", nil},
			{"z*", nil},
		} {
			got, err := storage.List(ctx, storage.Join(root, c.glob))
			var want []string
			for _, w := range c.want {
				want = append(want, storage.Join(root, w))
			}
			if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("List(%s) = %q, %v; want %q", c.glob, got, err, want)
			}
		}
		tree, err := storage.ListTree(ctx, root)
		if err != nil || len(tree) != len(names) || !slices.Contains(tree, storage.Join(root, "d/e/f/g/h/i/deep.txt")) {
			t.Errorf("ListTree = %q, %v; want all %d names", tree, err, len(names))
		}
		if err := storage.RemoveAll(ctx, root); err != nil {
			t.Fatal(err)
		}
		if tree, err := storage.ListTree(ctx, root); err != nil || len(tree) != 0 {
			t.Errorf("after RemoveAll: %q, %v", tree, err)
		}
	})
}

// TestListTreeAttrs: each entry carries the size, version and update time
// Stat reads, at any depth (memfs keeps no times).
func TestListTreeAttrs(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, root string) {
		names := []string{"a", "d/e/f/g/b"}
		storage.MkdirAll(storage.Join(root, "d/e/f/g"))
		for _, n := range names {
			if err := storage.WriteFile(ctx, storage.Join(root, n), []byte("content of "+n)); err != nil {
				t.Fatal(err)
			}
		}
		entries, err := storage.ListTreeAttrs(ctx, root)
		if err != nil || len(entries) != len(names) {
			t.Fatalf("ListTreeAttrs = %+v, %v", entries, err)
		}
		for i, e := range entries {
			st, err := storage.Stat(ctx, e.URI)
			if e.URI != storage.Join(root, names[i]) || err != nil || e.Attrs.Size != int64(len("content of "+names[i])) ||
				e.Attrs.Version != st.Version || e.Attrs.Updated.Sub(st.Updated).Abs() >= time.Second ||
				e.Attrs.Updated.IsZero() != strings.HasPrefix(root, "memfs://") {
				t.Errorf("entry %+v; Stat %+v, %v", e, st, err)
			}
		}
	})
}
