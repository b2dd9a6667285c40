package release_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// stage writes n one-row shards into a staging directory under root.
func stage(t *testing.T, root, name string, n int) string {
	t.Helper()
	dir := storage.Join(root, name)
	if err := storage.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		m := matrix.New(0, 0)
		m.Append(name+string(rune('a'+i)), []uint32{uint32(i)})
		shard := storage.Join(dir, "part-0000"+string(rune('0'+i))+"-of-0000"+string(rune('0'+n))+".parquet")
		if err := matrix.WriteMatrix(shard, m, matrix.WriterOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPublish runs the protocol on a local disk and both object stores:
// publish, refuse another run, retry the same run as a no-op, overwrite
// with fewer shards (old shards removed), and read the manifest back.
func TestPublish(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"local", "gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			root := t.TempDir()
			if store != "local" {
				storagetest.Start(t, store, "b")
				root = store + "://b/p"
			}
			out := storage.Join(root, "out")
			m, already, err := release.Publish(ctx, release.PublishParams{Staged: stage(t, root, "s1", 3), Output: out, RunID: "run1", ReportSHA256: "ab"})
			if err != nil || already {
				t.Fatalf("publish: %v already=%v", err, already)
			}
			got, err := storage.ReadManifest(ctx, out)
			if err != nil || got.RunID != "run1" || got.TotalRows != 3 || len(got.Shards) != 3 || got.Shards[0].Size <= 0 || got.ReportSHA256 != "ab" {
				t.Fatalf("manifest %+v, %v; want run1 with 3 shards of 1 row", got, err)
			}
			if m.TotalRows != 3 {
				t.Fatalf("returned manifest %+v", m)
			}
			files, err := matrix.ListFiles(out)
			if err != nil || len(files) != 3 {
				t.Fatalf("release lists %q, %v", files, err)
			}

			err = release.CheckOutput(ctx, out, "run2", false)
			if err == nil || !strings.Contains(err.Error(), "holds the release of run run1 (pass --overwrite") {
				t.Fatalf("another run: %v", err)
			}
			if _, _, err := release.Publish(ctx, release.PublishParams{Staged: stage(t, root, "s2", 1), Output: out, RunID: "run2"}); err == nil {
				t.Fatal("published over another run's release without overwrite")
			}
			if err := release.CheckOutput(ctx, out, "run1", false); !errors.Is(err, release.ErrPublished) {
				t.Fatalf("same run: %v, want ErrPublished", err)
			}
			if _, already, err := release.Publish(ctx, release.PublishParams{Staged: stage(t, root, "s3", 1), Output: out, RunID: "run1"}); err != nil || !already {
				t.Fatalf("retry of run1: %v already=%v", err, already)
			}

			if _, _, err := release.Publish(ctx, release.PublishParams{Staged: stage(t, root, "s4", 1), Output: out, RunID: "run4", Overwrite: true}); err != nil {
				t.Fatal(err)
			}
			files, err = matrix.ListFiles(out)
			if err != nil || len(files) != 1 {
				t.Fatalf("after overwrite the release lists %q, %v", files, err)
			}
			all, _ := storage.ListTree(ctx, out)
			if len(all) != 2 { // one shard and _SUCCESS
				t.Fatalf("after overwrite %s holds %q", out, all)
			}
		})
	}
}

// TestLocalOverwriteKeepsOldOnFailure: a local overwrite whose new release
// cannot be moved in puts the old release back whole, and a successful one
// leaves no replaced copy beside the output.
func TestLocalOverwriteKeepsOldOnFailure(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	out := storage.Join(root, "out")
	if _, _, err := release.Publish(ctx, release.PublishParams{Staged: stage(t, root, "s1", 2), Output: out, RunID: "run1"}); err != nil {
		t.Fatal(err)
	}
	// A staged directory that vanishes after its manifest is taken makes
	// the rename fail: simulate it with a staged path that is a file's child.
	staged := stage(t, root, "s2", 1)
	bad := release.PublishParams{Staged: staged, Output: out, RunID: "run2", Overwrite: true}
	if err := os.Chmod(root, 0o555); err != nil {
		t.Fatal(err)
	}
	_, _, err := release.Publish(ctx, bad)
	os.Chmod(root, 0o755)
	if os.Geteuid() != 0 && err == nil {
		t.Fatal("publish into a read-only parent succeeded")
	}
	if m, merr := storage.ReadManifest(ctx, out); merr != nil || (err != nil && m.RunID != "run1") {
		t.Fatalf("after a failed overwrite: manifest %v, %v (publish error %v)", m, merr, err)
	}
	if _, _, err := release.Publish(ctx, release.PublishParams{Staged: stage(t, root, "s3", 1), Output: out, RunID: "run3", Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(out + ".replaced-*")
	if len(left) != 0 {
		t.Fatalf("replaced release left beside the output: %q", left)
	}
	if m, err := storage.ReadManifest(ctx, out); err != nil || m.RunID != "run3" {
		t.Fatalf("manifest after overwrite: %v, %v", m, err)
	}
}
