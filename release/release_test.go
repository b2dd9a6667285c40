package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// root returns a fresh directory on store ("local", "gs" or "s3"), its
// emulator started for the test.
func root(t *testing.T, store string) string {
	t.Helper()
	if store == "local" {
		return t.TempDir()
	}
	storagetest.Start(t, store, "b")
	return store + "://b/p"
}

var stores = []string{"local", "gs", "s3"}

// testInput writes a one-row input file (local) and returns its path.
func testInput(t *testing.T) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.parquet")
	m := matrix.New(0, 0)
	m.Append("u", []uint32{1})
	if err := matrix.WriteMatrix(in, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	return in
}

// dirPlan is a directory release plan into out.
func dirPlan(in, out, runID string) Plan {
	return Plan{InputSpec: in, InputFiles: []string{in}, Output: out, Dir: true, RunID: runID}
}

// fakeJob stages rows as the pipeline does: shards, their list, a valid
// report.
func fakeJob(t *testing.T, r *Run, rows *matrix.Matrix, shards int) *smoothanonpb.RunReport {
	t.Helper()
	ctx := context.Background()
	var list []storage.Shard
	for i := range shards {
		part := matrix.New(0, 0)
		for j := i; j < rows.NumRows(); j += shards {
			part.Append(rows.Users[j], rows.Row(j))
		}
		name := fmt.Sprintf("part-%05d-of-%05d.parquet", i, shards)
		w, err := matrix.Create(storage.Join(StagedShards(r.Staging()), name), matrix.WriterOptions{Metadata: FileMetadata(nil, "")})
		if err != nil {
			t.Fatal(err)
		}
		for j, u := range part.Users {
			w.Write(u, part.Row(j))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		crc := w.CRC32C()
		list = append(list, storage.Shard{Name: name, Rows: int64(part.NumRows()), Size: w.Size(), CRC32C: &crc})
	}
	b, _ := json.Marshal(list)
	if err := storage.WriteFile(ctx, StagedShardList(r.Staging()), b); err != nil {
		t.Fatal(err)
	}
	return &smoothanonpb.RunReport{K: 2, Mode: "smooth", Rows: int64(rows.NumRows()), Valid: true}
}

func rowsOf(prefix string, n int) *matrix.Matrix {
	m := matrix.New(0, 0)
	for i := range n {
		m.Append(fmt.Sprintf("%s%03d", prefix, i), []uint32{uint32(i % 3)})
	}
	return m
}

// listing returns the names under dir (relative), sorted.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	all, err := storage.ListTree(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(f, storage.Clean(dir)), "/"))
	}
	slices.Sort(out)
	return out
}

// siblings lists the names beside out that a run may leave (stagings,
// probes, temporaries), which must all be gone after a run.
func siblings(t *testing.T, out string) []string {
	t.Helper()
	dir, base := storage.Split(out)
	var left []string
	for _, name := range listing(t, dir) {
		if strings.HasPrefix(name, "."+base) {
			left = append(left, name)
		}
	}
	return left
}

func mustKey(t *testing.T) *pseudonym.Key {
	t.Helper()
	k, err := pseudonym.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return &k
}

// TestLifecycle publishes, reruns, refuses and overwrites a directory
// release on each store, and checks what each step leaves.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			in, out := testInput(t), storage.Join(root(t, store), "rel")
			keyDir := t.TempDir()
			p := dirPlan(in, out, "night1")
			p.KeyOut, p.Report = filepath.Join(keyDir, "k1"), storage.Join(root(t, "local"), "r1.json")
			key := mustKey(t)
			r, err := Begin(ctx, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := r.Finish(Outcome{Report: fakeJob(t, r, rowsOf("a", 10), 3), Key: key})
			if err != nil || !rep.Published {
				t.Fatalf("finish: %v, published %v", err, rep.GetPublished())
			}
			m, err := storage.ReadManifest(ctx, out)
			if err != nil || m.RunID != "night1" || m.TotalRows != 10 || len(m.Shards) != 3 || m.KeyFingerprint != key.Fingerprint() || m.UserIDs != "pseudonym" {
				t.Fatalf("manifest %+v, %v", m, err)
			}
			for _, s := range m.Shards {
				if tok, ok := shardToken(s.Name); !ok || tok != r.Token() || s.CRC32C == nil {
					t.Errorf("shard %+v: want the run's token %s and a CRC", s, r.Token())
				}
			}
			if got := len(listing(t, out)); got != 4 {
				t.Errorf("release holds %q, want 3 shards and _SUCCESS", listing(t, out))
			}
			if left := siblings(t, out); len(left) != 0 {
				t.Errorf("left beside the release: %q", left)
			}
			if st, err := os.Stat(p.KeyOut); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("key file: %v", err)
			} else if b, _ := os.ReadFile(p.KeyOut); !bytes.Equal(b, key.Text()) {
				t.Error("the saved key is not the release's")
			}
			if pend, _ := filepath.Glob(filepath.Join(keyDir, ".*")); len(pend) != 0 {
				t.Errorf("pending keys left: %q", pend)
			}
			var got map[string]any
			if b, err := os.ReadFile(p.Report); err != nil || json.Unmarshal(b, &got) != nil || got["published"] != true || got["run_id"] != "night1" {
				t.Errorf("report %v (%v)", got, err)
			}

			// A rerun of the run id does nothing.
			if _, err := Begin(ctx, p, nil); !errors.As(err, new(*AlreadyPublishedError)) {
				t.Fatalf("rerun: %v, want AlreadyPublishedError", err)
			}
			// Another run id is refused, then replaces it with --overwrite.
			q := dirPlan(in, out, "night2")
			if _, err := Begin(ctx, q, nil); err == nil || !strings.Contains(err.Error(), "holds the release of run night1 (pass --overwrite") {
				t.Fatalf("another run: %v", err)
			}
			q.Overwrite = true
			r2, err := Begin(ctx, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r2.Finish(Outcome{Report: fakeJob(t, r2, rowsOf("b", 4), 1)}); err != nil {
				t.Fatal(err)
			}
			m2, _ := storage.ReadManifest(ctx, out)
			if m2.RunID != "night2" || m2.UserIDs != "keep" || m2.KeyFingerprint != "" {
				t.Errorf("overwritten manifest %+v", m2)
			}
			want := []string{m2.Shards[0].Name, storage.SuccessName}
			slices.Sort(want)
			if got := listing(t, out); !slices.Equal(got, want) {
				t.Errorf("after the overwrite the release holds %q, want %q", got, want)
			}
		})
	}
}

// TestRefusals: every plan that could lose data, read a release as input
// or leave an output half-written is refused before anything is made.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inDir := filepath.Join(dir, "in")
	os.MkdirAll(inDir, 0o755)
	in := filepath.Join(inDir, "a.parquet")
	m := matrix.New(0, 0)
	m.Append("u", []uint32{1})
	matrix.WriteMatrix(in, m, matrix.WriterOptions{})
	notRelease := filepath.Join(dir, "plain.parquet")
	matrix.WriteMatrix(notRelease, m, matrix.WriterOptions{})
	aRelease := filepath.Join(dir, "release.parquet")
	matrix.WriteMatrix(aRelease, m, matrix.WriterOptions{Metadata: FileMetadata(nil, "")})
	busy := filepath.Join(dir, "busy")
	os.MkdirAll(busy, 0o755)
	os.WriteFile(filepath.Join(busy, "notes.txt"), []byte("mine"), 0o644)
	report := filepath.Join(dir, "report.json")
	b, _ := EncodeReport(&smoothanonpb.RunReport{K: 8, Published: true})
	os.WriteFile(report, b, 0o644)
	failed := filepath.Join(dir, "failed.json")
	b, _ = EncodeReport(&smoothanonpb.RunReport{K: 8, Published: false, NotPublished: "boom"})
	os.WriteFile(failed, b, 0o644)
	key := filepath.Join(dir, "old.key")
	os.WriteFile(key, []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(dir, "rel0"), 0o755)
	os.WriteFile(filepath.Join(dir, "rel0", "_SUCCESS"), []byte(`{"version":2,"run_id":"a","shards":[]}`), 0o644)

	dirRel := func(spec, out string) Plan {
		return Plan{InputSpec: spec, InputFiles: []string{in}, Output: out, Dir: true, RunID: "r"}
	}
	file := func(spec, out string) Plan { return Plan{InputSpec: spec, InputFiles: []string{in}, Output: out} }
	with := func(p Plan, f func(*Plan)) Plan { f(&p); return p }
	for _, c := range []struct {
		name string
		plan Plan
		want string
	}{
		{"output is the input", file(in, in), "is an input file"},
		{"output dir holds the input", dirRel(inDir, inDir), "holds the input file"},
		{"output dir above the input", with(dirRel(in, dir), func(p *Plan) { p.Overwrite = true }), "holds the input file"},
		{"release file in the input dir", file(inDir, filepath.Join(inDir, "r1.parquet")), "would read the release as input"},
		{"release file matching the input glob", file(inDir+"/*.parquet", filepath.Join(inDir, "r.parquet")), "would read the release as input"},
		{"shards matching the input glob", dirRel(dir+"/*/*.parquet", filepath.Join(dir, "rel")), "would read the release as input"},
		{"glob in the output", dirRel(in, filepath.Join(dir, "r*")), "glob character"},
		{"glob in the report", with(dirRel(in, filepath.Join(dir, "rel")), func(p *Plan) { p.Report = dir + "/[ab].json" }), "glob character"},
		{"report is the output", with(file(in, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.Report = filepath.Join(dir, "o.parquet") }), "are both"},
		{"key is the output", with(file(in, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.KeyOut = filepath.Join(dir, "o.parquet") }), "are both"},
		{"report inside the release", with(dirRel(in, filepath.Join(dir, "rel")), func(p *Plan) { p.Report = filepath.Join(dir, "rel", "r.json") }), "inside the release"},
		{"key on a bucket", with(file(in, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.KeyOut = "gs://b/k" }), "local file only"},
		{"bad run id", dirRel(in, filepath.Join(dir, "rel2")), ""},
		{"run id climbing out", with(dirRel(in, filepath.Join(dir, "rel2")), func(p *Plan) { p.RunID = "a/../../x" }), "run id"},
		{"run id with a newline", with(dirRel(in, filepath.Join(dir, "rel2")), func(p *Plan) { p.RunID = "a\nb" }), "run id"},
		{"control character in the output", file(in, filepath.Join(dir, "a\nb.parquet")), "control character"},
		{"directory release onto a file", dirRel(in, notRelease), "is a file: run writes a release directory"},
		{"non-empty output", dirRel(in, busy), "is not empty (notes.txt)"},
		{"non-empty output with overwrite", with(dirRel(in, busy), func(p *Plan) { p.Overwrite = true }), "deletes nothing else"},
		{"existing file", file(in, notRelease), "exists (pass --overwrite"},
		{"existing non-release with overwrite", with(file(in, notRelease), func(p *Plan) { p.Overwrite = true }), "not a release"},
		{"existing report", with(file(in, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.Report = report }), "--metrics_out " + report + " exists"},
		{"report over a key", with(file(in, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.Report = key; p.Overwrite = true }), "is not a run report"},
		{"report over the input", with(file(in, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.Report = in; p.Overwrite = true }), "is an input file"},
		{"report read as input", with(file(inDir, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.Report = filepath.Join(inDir, "r.parquet") }), "would read it as input"},
		{"report over a manifest", with(file(in, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.Report = filepath.Join(dir, "rel0", "_SUCCESS"); p.Overwrite = true }), "is not a run report"},
		{"report under a file", with(file(in, filepath.Join(dir, "new", "a", "o.parquet")), func(p *Plan) { p.Report = filepath.Join(notRelease, "r.json") }), "not a directory"},
		{"existing key", with(file(in, filepath.Join(dir, "o.parquet")), func(p *Plan) { p.KeyOut = key }), "never overwritten"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := listing(t, dir)
			r, err := Begin(ctx, c.plan, nil)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				r.Abandon()
				return
			}
			if err == nil {
				r.Abandon()
				t.Fatalf("accepted, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !errors.As(err, new(*PlanError)) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want one line with %q", err, c.want)
			}
			if after := listing(t, dir); !slices.Equal(before, after) {
				t.Errorf("a refused plan changed the directory: %q -> %q", before, after)
			}
		})
	}
	// A run refused at its last check, the key path another live run
	// holds, leaves none of the output's new parent directories.
	first, err := Begin(ctx, with(file(in, filepath.Join(dir, "o3.parquet")), func(p *Plan) { p.KeyOut = filepath.Join(dir, "shared.key") }), nil)
	if err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	second := with(dirRel(in, filepath.Join(dir, "new", "b", "rel")), func(p *Plan) { p.KeyOut = filepath.Join(dir, "shared.key") })
	if r, err := Begin(ctx, second, nil); err == nil {
		r.Abandon()
		t.Errorf("a second run reserved the key path of a live one")
	} else if !strings.Contains(err.Error(), "another run") {
		t.Errorf("second run: %v, want another run holding the key path", err)
	}
	if after := listing(t, dir); !slices.Equal(before, after) {
		t.Errorf("a refused plan changed the directory: %q -> %q", before, after)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Errorf("a refused plan made the output's parent directories")
	}
	first.Abandon()

	// What may be replaced is: a release with --overwrite, a failed run's
	// report without it.
	for _, p := range []Plan{
		with(file(in, aRelease), func(p *Plan) { p.Overwrite = true }),
		with(file(in, filepath.Join(dir, "o2.parquet")), func(p *Plan) { p.Report = failed }),
	} {
		r, err := Begin(ctx, p, nil)
		if err != nil {
			t.Errorf("%+v: %v", p, err)
			continue
		}
		r.Abandon()
	}
}

// TestConcurrentPublish: runs that race for one output publish exactly
// one release, never a mix; the losers publish nothing, save no key and
// leave nothing.
func TestConcurrentPublish(t *testing.T) {
	ctx := context.Background()
	for _, store := range stores {
		for _, sameID := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/same_id=%v", store, sameID), func(t *testing.T) {
				in, out := testInput(t), storage.Join(root(t, store), "rel")
				keyDir := t.TempDir()
				const n = 4
				runs := make([]*Run, n)
				reps := make([]*smoothanonpb.RunReport, n)
				for i := range n {
					id := "night"
					if !sameID {
						id = fmt.Sprintf("run%d", i)
					}
					p := dirPlan(in, out, id)
					p.KeyOut = filepath.Join(keyDir, fmt.Sprintf("k%d", i))
					r, err := Begin(ctx, p, nil)
					if err != nil {
						t.Fatal(err)
					}
					runs[i], reps[i] = r, fakeJob(t, r, rowsOf(fmt.Sprintf("r%d-", i), 5+i), 2)
				}
				errs := make([]error, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, errs[i] = runs[i].Finish(Outcome{Report: reps[i], Key: mustKey(t)})
					}()
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					if err == nil {
						if winner >= 0 {
							t.Fatalf("runs %d and %d both published", winner, i)
						}
						winner = i
					} else if !errors.As(err, new(*LostRaceError)) {
						t.Errorf("run %d: %v, want LostRaceError", i, err)
					}
				}
				if winner < 0 {
					t.Fatal("no run published")
				}
				m, err := storage.ReadManifest(ctx, out)
				if err != nil || m.TotalRows != int64(5+winner) {
					t.Fatalf("manifest %+v %v, want run %d's %d rows", m, err, winner, 5+winner)
				}
				want := []string{storage.SuccessName}
				for _, s := range m.Shards {
					want = append(want, s.Name)
					if tok, _ := shardToken(s.Name); tok != runs[winner].Token() {
						t.Errorf("shard %s is not the winner's", s.Name)
					}
				}
				slices.Sort(want)
				if got := listing(t, out); !slices.Equal(got, want) {
					t.Errorf("output holds %q, want only the winner's %q", got, want)
				}
				keys, _ := filepath.Glob(filepath.Join(keyDir, "*"))
				hidden, _ := filepath.Glob(filepath.Join(keyDir, ".*"))
				if len(keys) != 1 || keys[0] != filepath.Join(keyDir, fmt.Sprintf("k%d", winner)) || len(hidden) != 0 {
					t.Errorf("keys %q %q, want only the winner's", keys, hidden)
				}
				if left := siblings(t, out); len(left) != 0 {
					t.Errorf("left beside the release: %q", left)
				}
			})
		}
	}
}

// TestNothingPublished: an invalid release, a failed job, a signal and
// a missed quality gate publish nothing, save no key, and report why.
func TestNothingPublished(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		want func(error) bool
		run  func(t *testing.T, r *Run) Outcome
		gate Gate
	}{
		{"missed gate", func(err error) bool { return errors.As(err, new(*GateError)) }, func(t *testing.T, r *Run) Outcome {
			rep := fakeJob(t, r, rowsOf("a", 4), 1)
			rep.EntriesIn, rep.Jaccard = 4, 0.3
			return Outcome{Report: rep}
		}, Gate{MinJaccard: ptr(0.5)}},
		{"invalid", func(err error) bool { return errors.Is(err, ErrVerification) }, func(t *testing.T, r *Run) Outcome {
			rep := fakeJob(t, r, rowsOf("a", 4), 1)
			rep.Valid = false
			return Outcome{Report: rep}
		}, Gate{}},
		{"job failed", func(err error) bool { return err != nil && strings.Contains(err.Error(), "boom") }, func(t *testing.T, r *Run) Outcome {
			fakeJob(t, r, rowsOf("a", 4), 1)
			return Outcome{Err: errors.New("boom")}
		}, Gate{}},
		{"SIGTERM", func(err error) bool {
			var ie *InterruptedError
			return errors.As(err, &ie) && ie.ExitCode() == 143
		}, func(t *testing.T, r *Run) Outcome {
			rep := fakeJob(t, r, rowsOf("a", 4), 1)
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
				t.Fatal("SIGTERM did not cancel the run")
			}
			return Outcome{Report: rep}
		}, Gate{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, out := testInput(t), filepath.Join(t.TempDir(), "rel")
			p := dirPlan(in, out, "n")
			p.KeyOut, p.Report = filepath.Join(t.TempDir(), "k"), filepath.Join(t.TempDir(), "r.json")
			p.Gate = c.gate
			r, err := Begin(ctx, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			o := c.run(t, r)
			o.Key = mustKey(t)
			rep, err := r.Finish(o)
			if !c.want(err) {
				t.Fatalf("finish: %v", err)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("output exists: %v", err)
			}
			if left := siblings(t, out); len(left) != 0 {
				t.Errorf("left: %q", left)
			}
			if _, err := os.Stat(p.KeyOut); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("key saved for an unpublished release")
			}
			var got map[string]any
			if b, err := os.ReadFile(p.Report); err != nil || json.Unmarshal(b, &got) != nil || got["published"] != false || got["not_published"] == "" {
				t.Errorf("report %v (%v); want published false and why", got, err)
			}
			if rep.Published {
				t.Error("report says published")
			}
		})
	}
}

// TestSingleFile: a single-file release is ordered by user id whatever
// the order it is handed in, marked, and claimed like a directory.
func TestSingleFile(t *testing.T) {
	ctx := context.Background()
	for _, store := range stores {
		t.Run(store, func(t *testing.T) {
			in, out := testInput(t), storage.Join(root(t, store), "out.parquet")
			rows := rowsOf("x", 50)
			rev := matrix.New(0, 0)
			for i := rows.NumRows() - 1; i >= 0; i-- {
				rev.Append(rows.Users[i], rows.Row(i))
			}
			key := mustKey(t)
			publish := func(p Plan) error {
				r, err := Begin(ctx, p, nil)
				if err != nil {
					return err
				}
				_, err = r.Finish(Outcome{Report: &smoothanonpb.RunReport{Valid: true, Rows: 50}, Release: rev, Key: key})
				return err
			}
			if err := publish(Plan{InputSpec: in, InputFiles: []string{in}, Output: out}); err != nil {
				t.Fatal(err)
			}
			f, err := matrix.OpenFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var users []string
			f.ReadAll(func(u string, _ []uint32) error { users = append(users, u); return nil })
			v, _ := f.Metadata(matrix.MetaRelease)
			fp, _ := f.Metadata(matrix.MetaKeyFingerprint)
			f.Close()
			if !slices.IsSorted(users) || len(users) != 50 {
				t.Errorf("release rows not in id order: %q", users[:5])
			}
			if v != matrix.ReleaseFormat || fp != key.Fingerprint() {
				t.Errorf("metadata release=%q fingerprint=%q", v, fp)
			}
			if err := publish(Plan{InputSpec: in, InputFiles: []string{in}, Output: out}); err == nil || !strings.Contains(err.Error(), "exists (pass --overwrite") {
				t.Errorf("second publish without overwrite: %v", err)
			}
			if err := publish(Plan{InputSpec: in, InputFiles: []string{in}, Output: out, Overwrite: true}); err != nil {
				t.Errorf("overwrite of a release: %v", err)
			}
			if left := siblings(t, out); len(left) != 0 {
				t.Errorf("left beside the release: %q", left)
			}
		})
	}
}

// TestStaleBucketLease: a bucket staging whose lease expired is removed by
// the next run; one being renewed is not; a run whose lease was broken
// stops.
func TestStaleBucketLease(t *testing.T) {
	old := LeaseTTL
	LeaseTTL = 2 * time.Second
	t.Cleanup(func() { LeaseTTL = old })
	ctx := context.Background()
	in, out := testInput(t), storage.Join(root(t, "gs"), "rel")
	live, err := Begin(ctx, dirPlan(in, out, "live"), nil)
	if err != nil {
		t.Fatal(err)
	}
	dead, err := Begin(ctx, dirPlan(in, out, "dead"), nil)
	if err != nil {
		t.Fatal(err)
	}
	dead.lease.release() // stops renewing, as a killed run does
	time.Sleep(3 * time.Second)
	removed, err := sweepDir(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != dead.Staging() {
		t.Errorf("removed %q, want only the dead run's staging %s", removed, dead.Staging())
	}
	if live.Context().Err() != nil {
		t.Fatalf("the live run stopped: %v", context.Cause(live.Context()))
	}
	// Break the live run's lease behind its back: its next renewal stops it.
	b, _ := json.Marshal(leaseInfo{Token: "someone-else"})
	if err := storage.WriteFile(ctx, storage.Join(live.Staging(), leaseName), b); err != nil {
		t.Fatal(err)
	}
	select {
	case <-live.Context().Done():
		if !errors.Is(context.Cause(live.Context()), errLeaseLost) {
			t.Errorf("stopped by %v", context.Cause(live.Context()))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a run whose lease was taken went on")
	}
	if _, err := live.Finish(Outcome{Report: fakeJob(t, live, rowsOf("a", 3), 1)}); !errors.Is(err, errLeaseLost) {
		t.Errorf("finish after losing the lease: %v", err)
	}
	if _, err := storage.ReadManifest(ctx, out); !errors.Is(err, storage.ErrNotRelease) {
		t.Errorf("a run that lost its lease published: %v", err)
	}
}

// TestStoreFailsDuringPublish: a store that stops answering in the middle
// of publishing (after the first shard's copy, at the claim) fails the run
// within the bound, with one line naming the object, and publishes
// nothing; once the store answers again a retry publishes and removes
// what the failed run left.
func TestStoreFailsDuringPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for timeouts; runs without -short")
	}
	ctx := context.Background()
	storage.SetTimeout(time.Second)
	old := LeaseTTL
	LeaseTTL = 1500 * time.Millisecond
	t.Cleanup(func() { storage.SetTimeout(0); LeaseTTL = old })
	for _, scheme := range []string{"gs", "s3"} {
		for _, mode := range []storagetest.Mode{storagetest.Refuse, storagetest.Stall} {
			t.Run(fmt.Sprintf("%s/%v", scheme, mode), func(t *testing.T) {
				proxy := storagetest.StartProxy(t, scheme, "b")
				in, out := testInput(t), scheme+"://b/p/rel"
				r, err := Begin(ctx, dirPlan(in, out, "n"), nil)
				if err != nil {
					t.Fatal(err)
				}
				rep := fakeJob(t, r, rowsOf("a", 12), 3)
				// Enough requests for the staged list and the first shard.
				proxy.AfterRequests(8, mode)
				start := time.Now()
				_, err = r.Finish(Outcome{Report: rep})
				if took := time.Since(start); err == nil || took > 3*time.Second+10*time.Second || strings.Contains(err.Error(), "\n") {
					t.Fatalf("finish with a dead store: %v after %v", err, took)
				}
				// A request of the failed run must not reach the store late.
				for deadline := time.Now().Add(10 * time.Second); proxy.Held() > 0; time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("the proxy still holds %d requests of the failed run", proxy.Held())
					}
				}
				proxy.Pass()
				if _, err := storage.ReadManifest(ctx, out); !errors.Is(err, storage.ErrNotRelease) {
					t.Fatalf("published with a dead store: %v", err)
				}
				time.Sleep(LeaseTTL + 500*time.Millisecond) // the failed run's lease expires
				r2, err := Begin(ctx, dirPlan(in, out, "n"), nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r2.Finish(Outcome{Report: fakeJob(t, r2, rowsOf("b", 5), 1)}); err != nil {
					t.Fatal(err)
				}
				m, _ := storage.ReadManifest(ctx, out)
				want := []string{m.Shards[0].Name, storage.SuccessName}
				slices.Sort(want)
				if got := listing(t, out); !slices.Equal(got, want) {
					t.Errorf("after the retry the release holds %q, want %q", got, want)
				}
				if left := siblings(t, out); len(left) != 0 {
					t.Errorf("left beside the release: %q", left)
				}
			})
		}
	}
}

// TestReadsAs: which outputs an input spec would read back.
func TestReadsAs(t *testing.T) {
	d := t.TempDir()
	os.MkdirAll(filepath.Join(d, "indir"), 0o755)
	t.Chdir(d)
	abs := func(p string) string { r, _ := resolve(p); return r }
	for _, c := range []struct {
		part, made string
		want       bool
	}{
		{"indir/*", abs("indir/rel/part-00000-of-00001-000000000000.parquet"), true}, // the glob matches the directory
		{"*/*.parquet", abs("rel2/part-00000-of-00001-000000000000.parquet"), true},  // a relative glob
		{"ind?r", abs("indir/y.parquet"), true},
		{"indir", abs("indir/y.parquet"), true},
		{"indir", abs("indir/rel/part-00000-of-00001-000000000000.parquet"), false}, // a directory is read one level deep
		{"indir/*.parquet", abs("rel/part-00000-of-00001-000000000000.parquet"), false},
		{d + "/*/*.parquet", abs("x/part-00000-of-00001-000000000000.parquet"), true},
		{"gs://b/d/*.parquet", "gs://b/d/r.parquet", true},
		{"gs://b/d/*", "gs://b/d/rel/part-00000-of-00001-000000000000.parquet", true},
		{"gs://b/d", "gs://b/d/r.parquet", true},
		{"gs://b/d/*.parquet", "gs://b/e/r.parquet", false},
	} {
		if got := readsAs(c.part, c.made); got != c.want {
			t.Errorf("readsAs(%q, %q) = %v, want %v", c.part, c.made, got, c.want)
		}
	}
}

// TestTamperedManifest: a manifest that lists anything but shard names
// (a path out of the release, the manifest itself, an unrelated file) is
// not a release this tool published: --overwrite refuses it and deletes
// nothing; a rerun of its run id whose rows or shards do not match is not
// taken for done.
func TestTamperedManifest(t *testing.T) {
	ctx := context.Background()
	in := testInput(t)
	for _, bad := range []string{"../victim.txt", "/tmp/victim.txt", storage.SuccessName, "notes.txt", "sub/part-00000-of-00001.parquet"} {
		t.Run(strings.ReplaceAll(bad, "/", "_"), func(t *testing.T) {
			root := t.TempDir()
			out := filepath.Join(root, "rel")
			victim := filepath.Join(root, "victim.txt")
			os.WriteFile(victim, []byte("precious"), 0o644)
			r, err := Begin(ctx, dirPlan(in, out, "n1"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Finish(Outcome{Report: fakeJob(t, r, rowsOf("a", 6), 2)}); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
			m, _ := storage.ReadManifest(ctx, out)
			m.Shards = append(m.Shards, storage.Shard{Name: bad})
			b, _ := json.Marshal(m)
			os.WriteFile(filepath.Join(out, storage.SuccessName), b, 0o644)
			before := listing(t, out)
			p := dirPlan(in, out, "n2")
			p.Overwrite = true
			if _, err := Begin(ctx, p, nil); err == nil || !strings.Contains(err.Error(), "is not a shard's name") {
				t.Fatalf("overwrite of a tampered release: %v", err)
			}
			if after := listing(t, out); !slices.Equal(before, after) {
				t.Errorf("refused run changed the release: %q -> %q", before, after)
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
				t.Errorf("victim file: %q %v", b, err)
			}
		})
	}
	t.Run("rerun of another input's release", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "rel")
		first := dirPlan(in, out, "n1")
		first.InputRows = 20 // long form: 20 pairs of 6 users
		r, err := Begin(ctx, first, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Finish(Outcome{Report: fakeJob(t, r, rowsOf("a", 6), 2)}); err != nil {
			t.Fatal(err)
		}
		if m, _ := storage.ReadManifest(ctx, out); m.InputRows != 20 {
			t.Fatalf("the manifest records %d input rows, want 20", m.InputRows)
		}
		p := dirPlan(in, out, "n1")
		p.InputRows = 21 // long form: the users are not known before the job
		if _, err := Begin(ctx, p, nil); err == nil || !strings.Contains(err.Error(), "made from 20 input rows, but the input has 21") {
			t.Errorf("rerun of a long-form input with other pairs: %v", err)
		}
		p.InputRows, p.Users = 20, 7
		if _, err := Begin(ctx, p, nil); err == nil || !strings.Contains(err.Error(), "with 6 users, but the input has 7") {
			t.Errorf("rerun over another input's release: %v", err)
		}
		p.Users = 6
		m, _ := storage.ReadManifest(ctx, out)
		os.Remove(filepath.Join(out, m.Shards[0].Name))
		if _, err := Begin(ctx, p, nil); err == nil || !strings.Contains(err.Error(), "lacks its shard") {
			t.Errorf("rerun over a release missing a shard: %v", err)
		}
	})
}

// TestPlantedFIFOs: named pipes planted where a run looks for its own
// files (temporaries, pending keys, spools, the manifest) never block it:
// it refuses or passes them by, within seconds, and removes none.
func TestPlantedFIFOs(t *testing.T) {
	ctx := context.Background()
	in := testInput(t)
	root := t.TempDir()
	out, single, keyDir := filepath.Join(root, "rel"), filepath.Join(root, "o.parquet"), t.TempDir()
	os.MkdirAll(out, 0o755)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fifos := []string{
		filepath.Join(root, ".o.parquet.tmp-x"),
		filepath.Join(keyDir, ".k.pending-000000000000"),
		filepath.Join(tmp, storage.SpoolPrefix+"x"),
		filepath.Join(out, "._SUCCESS.tmp-x"),
	}
	for _, f := range fifos {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		p := Plan{InputSpec: in, InputFiles: []string{in}, Output: single, KeyOut: filepath.Join(keyDir, "k")}
		r, err := Begin(ctx, p, nil)
		if err == nil {
			_, err = r.Finish(Outcome{Report: &smoothanonpb.RunReport{Valid: true, Rows: 3}, Release: rowsOf("a", 3), Key: mustKey(t)})
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a run beside planted FIFOs: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a planted FIFO blocked the run")
	}
	for _, f := range fifos {
		if st, err := os.Lstat(f); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s was removed or replaced", f)
		}
	}
	// A FIFO as the manifest: refused, not read.
	syscall.Mkfifo(filepath.Join(out, storage.SuccessName), 0o600)
	go func() { _, err := Begin(ctx, dirPlan(in, out, "n"), nil); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("FIFO manifest: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a FIFO manifest blocked the run")
	}
}

// TestKeyPath: a key path is reserved by the live run that will save a key
// there (a second run is refused before any work, instead of publishing
// and then failing to save its key); a dead run's pending key is saved
// only for the release published at the output it names, even when the
// next run with that key path writes elsewhere; and a single file's retry
// after its run died past the claim is done (AlreadyPublishedError).
func TestKeyPath(t *testing.T) {
	ctx := context.Background()
	in := testInput(t)
	root, keyDir := t.TempDir(), t.TempDir()
	key := filepath.Join(keyDir, "k")
	a := Plan{InputSpec: in, InputFiles: []string{in}, Output: filepath.Join(root, "a.parquet"), KeyOut: key}
	b := a
	b.Output = filepath.Join(root, "b.parquet")
	ra, err := Begin(ctx, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Begin(ctx, b, nil); err == nil || !strings.Contains(err.Error(), "another run that is still running will save its key there") {
		t.Fatalf("second run with the same key path: %v", err)
	}
	// Run a dies right after its claim: its pending file stays, unlocked.
	k := mustKey(t)
	Fault = func(s Stage) {
		if s == StageClaimed {
			ra.pending.lock.Release()
			ra.pending.lock = nil // as if the process died: nothing removes it
			panic("died")
		}
	}
	func() {
		defer func() { recover(); Fault = nil }()
		ra.Finish(Outcome{Report: &smoothanonpb.RunReport{Valid: true, Rows: 3}, Release: rowsOf("a", 3), Key: k})
	}()
	if _, err := os.Stat(key); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the key was saved before the claim's end")
	}
	// Run b, into another output, saves a's key for a's release (and is
	// then refused: the key path is taken) rather than deleting it.
	if _, err := Begin(ctx, b, nil); err == nil || !strings.Contains(err.Error(), "exists (a key is never overwritten)") {
		t.Errorf("run b: %v", err)
	}
	if !sameKey(key, *k) {
		t.Fatal("a's pending key was not saved as a's key")
	}
	os.Remove(key)
	// Again, and now a's own retry: it is done.
	pk, err := reserveKey(key, "111111111111", a.Output, false)
	if err != nil {
		t.Fatal(err)
	}
	pk.hold(*k)
	pk.lock.Release()
	if _, err := Begin(ctx, a, nil); !errors.As(err, new(*AlreadyPublishedError)) {
		t.Errorf("retry of a: %v, want AlreadyPublishedError", err)
	}
	if !sameKey(key, *k) {
		t.Error("the retry did not save a's key")
	}
	if left, _ := filepath.Glob(filepath.Join(keyDir, ".*")); len(left) != 0 {
		t.Errorf("pending files left: %q", left)
	}
}

// TestSiblingStagingSwept: a dead staging of another output in the same
// directory (the night before, on a shared prefix) is removed by the next
// run there; a live one is not.
func TestSiblingStagingSwept(t *testing.T) {
	ctx := context.Background()
	in := testInput(t)
	root := t.TempDir()
	live, err := Begin(ctx, dirPlan(in, filepath.Join(root, "night1"), "n1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(root, ".night0.staging-n0-abcdefabcdef")
	os.MkdirAll(filepath.Join(dead, "release"), 0o755)
	os.WriteFile(filepath.Join(dead, leaseName), nil, 0o600) // unlocked: its run is gone
	r, err := Begin(ctx, dirPlan(in, filepath.Join(root, "night2"), "n2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Abandon()
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Error("the dead sibling staging was kept")
	}
	if _, err := os.Stat(live.Staging()); err != nil {
		t.Error("the live run's staging was removed")
	}
	live.Abandon()
}
