package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
	"github.com/smoothanon/smoothanon/transforms"
)

func init() { register.Function2x1(failAfterWrite) }

// failAfterWrite fails the job once Write has written its shards, before
// Publish can run (Publish waits for these Stats).
func failAfterWrite(st transforms.Stats, _ func(transforms.Stats)) error {
	return fmt.Errorf("injected failure after writing %d shards", len(st.ShardFiles))
}

// upload copies local files into a bucket prefix and returns their URIs.
func upload(t *testing.T, files []string, prefix string) []string {
	t.Helper()
	var uris []string
	for _, f := range files {
		b, err := storage.ReadFile(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		uri := storage.Join(prefix, filepath.Base(f))
		if err := storage.WriteFile(context.Background(), uri, b); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, uri)
	}
	return uris
}

// TestRunOnBuckets runs the pipeline from gs:// and s3:// inputs into
// bucket outputs, each shard written from runs: the release equals the
// local run's (written straight) byte for byte, has
// its manifest, leaves no staging objects; a second run is refused and a
// retry of the same run id is a no-op.
func TestRunOnBuckets(t *testing.T) {
	dir := t.TempDir()
	_, files := writeInput(t, dir, gen.SBMParams{N: 300, S: 30, Q: 0.5, P: 0.01, Seed: 3})
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "out"),
		Solver: solver.Params{K: 4, Seed: 1}, ChunkSize: 100, Shards: 2}
	runOK(t, p)
	_, local := readRelease(t, p.Output)
	ctx := context.Background()
	for _, store := range []string{"gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			storagetest.Start(t, store, "bkt")
			upload(t, files, store+"://bkt/in")
			q := p
			q.Input, q.Output, q.RunID = store+"://bkt/in/*.parquet", store+"://bkt/rel", "2026-11-23"
			// Shards of about 10 runs each: the runs go through the
			// bucket's staging prefix too.
			res, err := run(ctx, q, hooks{runRows: 16})
			if err != nil || !res.Report.Valid {
				t.Fatalf("run: %v", err)
			}
			if res.RunID != q.RunID {
				t.Fatalf("run id %q, want %q", res.RunID, q.RunID)
			}
			m, err := storage.ReadManifest(ctx, q.Output)
			if err != nil || m.RunID != q.RunID || len(m.Shards) != len(local) || m.TotalRows != 300 {
				t.Fatalf("manifest %+v, %v", m, err)
			}
			for _, s := range m.Shards {
				got, err := storage.ReadFile(ctx, storage.Join(q.Output, s.Name))
				if want := local[release.StagedName(s.Name)]; err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%s differs from the local run (%v)", s.Name, err)
				}
			}
			all, _ := storage.ListTree(ctx, store+"://bkt")
			if len(all) != len(files)+len(local)+1 {
				t.Errorf("bucket holds %q: want inputs, shards and _SUCCESS only", all)
			}

			q.RunID = "other"
			if _, err := Run(ctx, q); err == nil || !strings.Contains(err.Error(), "holds the release of run 2026-11-23") {
				t.Fatalf("second run into a published prefix: %v", err)
			}
			q.RunID = "2026-11-23"
			if res, err := Run(ctx, q); err != nil || !res.AlreadyPublished {
				t.Fatalf("retry of the run id: %v %+v", err, res)
			}
		})
	}
}

// TestFailedRunPublishesNothing fails a job after its shards are written:
// the output prefix stays empty (no shards, no _SUCCESS) and the staging
// objects are removed.
func TestFailedRunPublishesNothing(t *testing.T) {
	storagetest.StartGCS(t, "bkt")
	dir := t.TempDir()
	_, files := writeInput(t, dir, gen.SBMParams{N: 300, S: 30, Q: 0.5, P: 0.01, Seed: 3})
	in := upload(t, files, "gs://bkt/in")
	p := Params{Input: strings.Join(in, ","), Output: "gs://bkt/rel", Solver: solver.Params{K: 4, Seed: 1}, ChunkSize: 100, Shards: 2}
	_, err := run(context.Background(), p, hooks{afterWrite: func(s beam.Scope, written beam.PCollection) beam.PCollection {
		return beam.ParDo(s.Scope("Fail"), failAfterWrite, written)
	}})
	if err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("err %v, want the injected failure", err)
	}
	ctx := context.Background()
	if _, err := storage.ReadManifest(ctx, p.Output); !errors.Is(err, storage.ErrNotRelease) {
		t.Errorf("manifest after a failed run: %v", err)
	}
	all, _ := storage.ListTree(ctx, "gs://bkt")
	if len(all) != len(in) {
		t.Errorf("bucket holds %q after a failed run, want the inputs only", all)
	}
}
