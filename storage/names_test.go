package storage_test

import (
	"bytes"
	"context"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// awkward are object names that URL handling mangles: decoded escapes,
// fragments, '+' read as a space, spaces, non-ASCII, a bad escape.
var awkward = []string{"ü/é x.parquet", "a%41b", "c#d", "e+f=g", "h i", "j%zz", "k&l;m,n'o"}

// emulatorKeys starts the emulator of store holding bucket "bkt" and
// returns a function listing its object names as the emulator holds
// them, bypassing the clients.
func emulatorKeys(t *testing.T, store string) func() []string {
	switch store {
	case "gs":
		g := storagetest.StartGCS(t, "bkt")
		return func() []string {
			l, err := g.ListObjectsWithOptionsPaginated("bkt", fakestorage.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, o := range l.Objects {
				keys = append(keys, o.Name)
			}
			slices.Sort(keys)
			return keys
		}
	case "s3":
		s := storagetest.StartS3(t, "bkt")
		return func() []string {
			l, err := s.Backend.ListBucket("bkt", nil, gofakes3.ListBucketPage{})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, o := range l.Contents {
				keys = append(keys, o.Key)
			}
			slices.Sort(keys)
			return keys
		}
	}
	t.Fatalf("no store %s", store)
	return nil
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	slices.Sort(out)
	return out
}

// TestNamesAsWritten: every operation names the object exactly as
// written, as the emulator itself lists it.
func TestNamesAsWritten(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			keys := emulatorKeys(t, store)
			root := store + "://bkt/n"
			data := func(name string) []byte { return []byte("the content of " + name) }
			for _, name := range awkward {
				if err := storage.Put(ctx, root+"/"+name, data(name), storage.Cond{IfAbsent: true}); err != nil {
					t.Fatalf("Put %q: %v", name, err)
				}
			}
			if got, want := keys(), prefixed("n/", awkward); !slices.Equal(got, want) {
				t.Fatalf("the emulator holds %q, want %q", got, want)
			}
			tree, err := storage.ListTree(ctx, root)
			if want := prefixed(root+"/", awkward); err != nil || !slices.Equal(tree, want) {
				t.Fatalf("ListTree = %q, %v; want %q", tree, err, want)
			}
			entries, err := storage.ListTreeAttrs(ctx, root)
			if err != nil || len(entries) != len(awkward) {
				t.Fatalf("ListTreeAttrs = %+v, %v", entries, err)
			}
			// The listing's attributes are those Stat reads (an S3 listing
			// has no CRC-32C, and its times are finer than a HEAD's).
			for _, e := range entries {
				name := strings.TrimPrefix(e.URI, root+"/")
				st, err := storage.Stat(ctx, e.URI)
				if err != nil || e.Attrs.Size != int64(len(data(name))) || e.Attrs.Size != st.Size || e.Attrs.Version != st.Version ||
					e.Attrs.Updated.IsZero() || e.Attrs.Updated.Sub(st.Updated).Abs() >= time.Second ||
					store == "gs" && (!e.Attrs.HasCRC32C || e.Attrs.CRC32C != st.CRC32C) {
					t.Errorf("ListTreeAttrs entry %+v; Stat %+v, %v", e, st, err)
				}
			}

			for _, name := range awkward {
				uri := root + "/" + name
				want := data(name)
				crc := crc32.Checksum(want, crc32.MakeTable(crc32.Castagnoli))

				// Listing: the literal name, and a glob over its level.
				if got, err := storage.List(ctx, uri); err != nil || !slices.Equal(got, []string{uri}) {
					t.Errorf("List(%q) = %q, %v", uri, got, err)
				}
				dir, _ := storage.Split(uri)
				if got, err := storage.List(ctx, dir+"/*"); err != nil || !slices.Contains(got, uri) {
					t.Errorf("List(%q) = %q, %v; want it to hold %q", dir+"/*", got, err, uri)
				}

				st, err := storage.Stat(ctx, uri)
				if err != nil || st.Size != int64(len(want)) || st.HasCRC32C && st.CRC32C != crc {
					t.Errorf("Stat(%q) = %+v, %v", uri, st, err)
				}
				if n, err := storage.Size(ctx, uri); err != nil || n != int64(len(want)) {
					t.Errorf("Size(%q) = %d, %v", uri, n, err)
				}
				if ok, err := storage.Exists(ctx, uri); !ok || err != nil {
					t.Errorf("Exists(%q) = %v, %v", uri, ok, err)
				}
				if b, err := storage.ReadFile(ctx, uri); err != nil || !bytes.Equal(b, want) {
					t.Errorf("ReadFile(%q) = %q, %v", uri, b, err)
				}
				if b, _, err := storage.ReadVersioned(ctx, uri); err != nil || !bytes.Equal(b, want) {
					t.Errorf("ReadVersioned(%q) = %q, %v", uri, b, err)
				}
				f, err := storage.Open(ctx, uri)
				if err != nil {
					t.Errorf("Open(%q): %v", uri, err)
				} else {
					p := make([]byte, 7)
					if n, err := f.ReadAt(p, 4); err != nil || n != 7 || string(p) != string(want[4:11]) {
						t.Errorf("ReadAt(%q) = %d %v %q", uri, n, err, p)
					}
					f.Close()
				}

				cp := store + "://bkt/copy/" + name
				if err := storage.Copy(ctx, uri, cp); err != nil {
					t.Errorf("Copy(%q): %v", uri, err)
				} else if !slices.Contains(keys(), "copy/"+name) {
					t.Errorf("copy of %q: the emulator holds %q", name, keys())
				}
				if b, err := storage.ReadFile(ctx, cp); err != nil || !bytes.Equal(b, want) {
					t.Errorf("ReadFile(%q) = %q, %v", cp, b, err)
				}
				if cst, err := storage.Stat(ctx, cp); err != nil || cst.HasCRC32C != st.HasCRC32C || cst.CRC32C != st.CRC32C {
					t.Errorf("Stat(%q) = %+v, %v; the source has %+v", cp, cst, err, st)
				}

				for _, u := range []string{uri, cp} {
					if err := storage.Remove(ctx, u); err != nil {
						t.Errorf("Remove(%q): %v", u, err)
					}
					if ok, err := storage.Exists(ctx, u); ok || err != nil {
						t.Errorf("after Remove(%q): Exists = %v, %v", u, ok, err)
					}
				}
			}
			if left := keys(); len(left) != 0 {
				t.Errorf("left after removing every name: %q", left)
			}
		})
	}
}
