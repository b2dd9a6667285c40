package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/verify"
)

const testTable = verify.FeatureTableHeader + "\n1,2,3,0,1\n"

// TestFeatureTableRefusals: the feature table is checked like every
// other output, before any work, each refusal one line, nothing changed.
func TestFeatureTableRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inDir := filepath.Join(dir, "in")
	os.MkdirAll(inDir, 0o755)
	in := filepath.Join(inDir, "a.parquet")
	if err := os.Rename(testInput(t), in); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.csv")
	os.WriteFile(other, []byte("feature,held\n"), 0o644)
	oldTable := filepath.Join(dir, "old.csv")
	os.WriteFile(oldTable, []byte(testTable), 0o644)
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	rel, file := filepath.Join(dir, "rel"), filepath.Join(dir, "o.parquet")
	plan := func(dirRelease bool, table string, f func(*Plan)) Plan {
		p := Plan{InputSpec: in, InputFiles: []string{in}, Output: file, FeatureTable: table}
		if dirRelease {
			p.Output, p.Dir, p.RunID = rel, true, "r"
		}
		if f != nil {
			f(&p)
		}
		return p
	}
	for _, c := range []struct {
		name string
		plan Plan
		want string
	}{
		{"the release", plan(false, file, nil), "--output and --feature_report are both"},
		{"the report", plan(false, filepath.Join(dir, "r.json"), func(p *Plan) { p.Report = filepath.Join(dir, "r.json") }), "--metrics_out and --feature_report are both"},
		{"the key", plan(false, filepath.Join(dir, "k"), func(p *Plan) { p.KeyOut = filepath.Join(dir, "k") }), "--pseudonym_key_out and --feature_report are both"},
		{"inside the release", plan(true, filepath.Join(rel, "f.csv"), nil), "--feature_report " + filepath.Join(rel, "f.csv") + " is inside the release"},
		{"an input file", plan(false, in, func(p *Plan) { p.Overwrite = true }), "--feature_report " + in + " is an input file"},
		{"read as input", plan(false, filepath.Join(inDir, "f.parquet"), func(p *Plan) { p.InputSpec = inDir }), "would read it as input"},
		{"a glob", plan(true, dir+"/f*.csv", nil), "glob character"},
		{"a directory", plan(true, inDir, func(p *Plan) { p.Overwrite = true }), "--feature_report " + inDir},
		{"not a table", plan(true, other, func(p *Plan) { p.Overwrite = true }), "exists and is not a feature table"},
		{"a named pipe", plan(true, fifo, func(p *Plan) { p.Overwrite = true }), "--feature_report " + fifo},
		{"a table, no overwrite", plan(true, oldTable, nil), "--feature_report " + oldTable + " exists (pass --overwrite"},
		{"a bucket", plan(true, "gs://b", nil), "not the bucket"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := listing(t, dir)
			r, err := Begin(ctx, c.plan, nil)
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
	// An old table is replaced with --overwrite.
	r, err := Begin(ctx, plan(true, oldTable, func(p *Plan) { p.Overwrite = true }), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Abandon()
}

// TestFeatureTablePublished: the table is written with the release,
// whole, and never for a run that publishes nothing.
func TestFeatureTablePublished(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"local", "gs"} {
		if store != "local" && testing.Short() {
			continue
		}
		t.Run(store, func(t *testing.T) {
			base := root(t, store)
			in := testInput(t)
			// A directory release: the job stages the table.
			p := dirPlan(in, storage.Join(base, "rel"), "n1")
			p.FeatureTable = storage.Join(base, "features.csv")
			r, err := Begin(ctx, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			rep := fakeJob(t, r, rowsOf("a", 4), 1)
			if err := storage.WriteFile(ctx, StagedFeatureTable(r.Staging()), []byte(testTable)); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Finish(Outcome{Report: rep}); err != nil {
				t.Fatal(err)
			}
			if b, err := storage.ReadFile(ctx, p.FeatureTable); err != nil || string(b) != testTable {
				t.Errorf("table %q, %v", b, err)
			}
			// A single file: the outcome carries it.
			fp := Plan{InputSpec: in, InputFiles: []string{in}, Output: storage.Join(base, "one.parquet"), FeatureTable: storage.Join(base, "one.csv")}
			r, err = Begin(ctx, fp, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Finish(Outcome{Report: &smoothanonpb.RunReport{Valid: true, Rows: 3}, Release: rowsOf("a", 3), FeatureTable: []byte(testTable)}); err != nil {
				t.Fatal(err)
			}
			if b, err := storage.ReadFile(ctx, fp.FeatureTable); err != nil || string(b) != testTable {
				t.Errorf("single-file table %q, %v", b, err)
			}
		})
	}
}

// TestFeatureTableNotPublished: an invalid release, a missed gate, a
// signal and a work that made no table publish nothing, and write no
// table and no temporary beside it.
func TestFeatureTableNotPublished(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		gate  Gate
		table bool
		run   func(t *testing.T, r *Run, rep *smoothanonpb.RunReport)
		want  string
	}{
		{"invalid", Gate{}, true, func(t *testing.T, r *Run, rep *smoothanonpb.RunReport) { rep.Valid = false }, "failed verification"},
		{"missed gate", Gate{MinJaccard: ptr(0.5)}, true, func(t *testing.T, r *Run, rep *smoothanonpb.RunReport) {
			rep.EntriesIn, rep.Jaccard = 4, 0.3
		}, "quality gate"},
		{"SIGTERM", Gate{}, true, func(t *testing.T, r *Run, rep *smoothanonpb.RunReport) {
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			<-r.Context().Done()
		}, "interrupted"},
		{"no table staged", Gate{}, false, func(t *testing.T, r *Run, rep *smoothanonpb.RunReport) {}, "staged no feature table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, dir := testInput(t), t.TempDir()
			p := dirPlan(in, filepath.Join(dir, "rel"), "n")
			p.FeatureTable, p.Report, p.Gate = filepath.Join(dir, "features.csv"), filepath.Join(dir, "r.json"), c.gate
			r, err := Begin(ctx, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			rep := fakeJob(t, r, rowsOf("a", 4), 1)
			if c.table {
				storage.WriteFile(ctx, StagedFeatureTable(r.Staging()), []byte(testTable))
			}
			c.run(t, r, rep)
			if _, err := r.Finish(Outcome{Report: rep}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("finish: %v, want %q", err, c.want)
			}
			if left := listing(t, dir); !slices.Equal(left, []string{"r.json"}) {
				t.Errorf("left %q, want the report only", left)
			}
		})
	}
}
