package matrix

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/smoothanon/smoothanon/storage"
)

// TestInputNeverARelease: every way of naming a release, or a part of
// one, as input is refused with one line naming the path and saying why —
// by ListFiles, ReadMatrix, Read and FilesMetadata alike — while inputs
// beside a release, and a directory with Hadoop's empty _SUCCESS, read.
func TestInputNeverARelease(t *testing.T) {
	forEachStore(t, func(t *testing.T, store, root string) {
		ctx := context.Background()
		md := releaseMeta("00ff00ff00ff00ff")
		in := storage.Join(root, "in.parquet")
		if err := WriteMatrix(in, rowsMatrix("u", 4), WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		// A single-file release beside the input: solve --input root
		// --output root/r1.parquet made it.
		r1 := storage.Join(root, "r1.parquet")
		if err := WriteMatrix(r1, rowsMatrix("u", 4), WriterOptions{Metadata: md}); err != nil {
			t.Fatal(err)
		}
		rel := storage.Join(root, "rel")
		m := testRelease(t, rel, 2, md, rowsMatrix("a", 2), rowsMatrix("b", 2))
		shard0, shard1 := storage.Join(rel, m.Shards[0].Name), storage.Join(rel, m.Shards[1].Name)
		// An old release, without the marker in its files.
		old := storage.Join(root, "old")
		mo := testRelease(t, old, 1, nil, rowsMatrix("a", 2))
		oldShard := storage.Join(old, mo.Shards[0].Name)
		// An interrupted publish: shards, no _SUCCESS.
		partial := storage.Join(root, "partial")
		testRelease(t, partial, 2, md, rowsMatrix("a", 2))
		storage.Remove(ctx, storage.Join(partial, storage.SuccessName))

		isRelease := fmt.Sprintf("is a published release (it holds _SUCCESS); %v", ErrReleaseInput)
		shardOf := func(dir string) string {
			return fmt.Sprintf("is a shard of the published release %s (it holds _SUCCESS); %v", storage.Clean(dir), ErrReleaseInput)
		}
		for _, c := range []struct {
			spec, want string
			is         error
		}{
			{rel, rel + ": " + isRelease, ErrReleaseInput},
			{old, old + ": " + isRelease, ErrReleaseInput},
			{in + "," + rel, rel + ": " + isRelease, ErrReleaseInput},
			{storage.Join(rel, "*.parquet"), shard0 + ": " + shardOf(rel), ErrReleaseInput},
			{storage.Join(old, "part-*"), oldShard + ": " + shardOf(old), ErrReleaseInput},
			{in + "," + shard1, shard1 + ": " + shardOf(rel), ErrReleaseInput},
			{r1, r1 + ": is a release (Parquet metadata smoothanon.release); " + ErrReleaseInput.Error(), ErrReleaseInput},
			{root, r1 + ": is a release (Parquet metadata smoothanon.release); " + ErrReleaseInput.Error(), ErrReleaseInput},
			{partial, storage.Clean(partial) + ": not a published release: no _SUCCESS", storage.ErrNotRelease},
		} {
			readers := map[string]func() error{
				"ReadMatrix": func() error { _, _, err := ReadMatrix(c.spec, ReadOptions{}); return err },
				"Read":       func() error { return Read(c.spec, func(string, []uint32) error { return nil }) },
				"FilesMetadata": func() error {
					_, err := FilesMetadata(c.spec, MetaUserIDs)
					return err
				},
			}
			for name, read := range readers {
				if err := read(); err == nil || err.Error() != c.want || !errors.Is(err, c.is) {
					t.Errorf("%s(%s) = %v, want %q", name, c.spec, err, c.want)
				}
			}
		}

		// What is not a release still reads: the input beside them, and a
		// directory whose _SUCCESS is Hadoop's empty marker.
		hadoop := storage.Join(root, "spark")
		storage.MkdirAll(hadoop)
		if err := WriteMatrix(storage.Join(hadoop, "part-00000-c000.snappy.parquet"), rowsMatrix("h", 3), WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteFile(ctx, storage.Join(hadoop, storage.SuccessName), nil); err != nil {
			t.Fatal(err)
		}
		for spec, rows := range map[string]int{in: 4, hadoop: 3, in + "," + hadoop: 7} {
			got, _, err := ReadMatrix(spec, ReadOptions{})
			if err != nil || got.NumRows() != rows {
				t.Errorf("ReadMatrix(%s): %v", spec, err)
			}
		}
	})
}
