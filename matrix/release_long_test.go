package matrix

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/storage"
)

// longRelease writes shards in the given shapes under dir with a manifest
// of shape long that counts users.
func longRelease(t *testing.T, dir string, users int64, shapes []Shape, shards ...*Matrix) {
	t.Helper()
	ctx := context.Background()
	m := &storage.Manifest{Version: storage.ManifestVersion, RunID: "r1", Shape: storage.ShapeLong, Users: users}
	for i, sm := range shards {
		name := fmt.Sprintf("part-%05d-of-%05d-0123456789ab.parquet", i, len(shards))
		uri := filepath.Join(dir, name)
		w, err := Create(uri, WriterOptions{Shape: shapes[i]})
		if err != nil {
			t.Fatal(err)
		}
		for r := range sm.Users {
			if err := w.Write(sm.Users[r], sm.Row(r)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		crc := w.CRC32C()
		s := storage.Shard{Name: name, Size: w.Size(), Rows: w.FileRows(), Users: w.Rows(), CRC32C: &crc}
		m.Shards = append(m.Shards, s)
		m.TotalRows += s.Rows
	}
	var sum int64
	for _, s := range m.Shards {
		sum += s.Users
	}
	m.Shards[0].Users += users - sum // users on no row beyond the shards'
	if err := storage.WriteManifest(ctx, dir, m); err != nil {
		t.Fatal(err)
	}
}

// TestReadLongRelease: a long-form release reads one row per user, its
// pairs gathered from consecutive rows; its users are the manifest's,
// those on no row included; a user whose rows are apart comes twice; a
// shard in list form under a long manifest is refused.
func TestReadLongRelease(t *testing.T) {
	a := New(0, 0)
	a.Append("a", []uint32{1, 2})
	a.Append("b", []uint32{})
	a.Append("c", []uint32{3})
	b := New(0, 0)
	b.Append("d", []uint32{1, 4, 7})
	dir := t.TempDir()
	longRelease(t, dir, 5, []Shape{ShapeLong, ShapeLong}, a, b)
	r, err := OpenRelease(dir, ReleaseOptions{VerifyChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Shape != ShapeLong || r.Users != 5 || r.Rows != 6 {
		t.Errorf("OpenRelease: shape %v users %d rows %d, want long, 5, 6", r.Shape, r.Users, r.Rows)
	}
	var got []string
	if err := r.Read(func(u string, f []uint32) error {
		got = append(got, fmt.Sprint(u, f))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a[1 2]", "c[3]", "d[1 4 7]"}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}

	apart := New(0, 0)
	apart.Append("a", []uint32{1})
	apart.Append("b", []uint32{2})
	apart.Append("a", []uint32{3})
	dir = t.TempDir()
	longRelease(t, dir, 3, []Shape{ShapeLong}, apart)
	got = nil
	if err := ReadRelease(dir, ReleaseOptions{}, func(u string, f []uint32) error {
		got = append(got, u)
		return nil
	}); err != nil || !slices.Equal(got, []string{"a", "b", "a"}) {
		t.Errorf("rows apart: read %v, %v; want a twice", got, err)
	}

	dir = t.TempDir()
	longRelease(t, dir, 4, []Shape{ShapeLong, ShapeList}, a, b)
	_, err = OpenRelease(dir, ReleaseOptions{})
	if !errors.Is(err, ErrShardMismatch) || !strings.Contains(err.Error(), "list form, _SUCCESS says long") {
		t.Errorf("a list shard in a long release: %v", err)
	}
}
