package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/verify"
)

// checkAccounting requires a run's report and feature table to be the
// accounting of its release against its input, summing to the report's
// totals.
func checkAccounting(t *testing.T, in *matrix.Matrix, release, report, table string) {
	t.Helper()
	_, rel, err := readRelease(release, matrix.ReleaseOptions{}, matrix.ValuesIDs, nil)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := verify.CountFeatures(in, rel)
	if err != nil {
		t.Fatal(err)
	}
	r := readReport(t, report)
	if want := verify.SummarizeFeatures(counts).Proto(); !proto.Equal(r.Features, want) {
		t.Errorf("report features\n%v\nwant\n%v", r.Features, want)
	}
	checkSums(t, r)
	var want bytes.Buffer
	verify.WriteFeatureTable(&want, counts, verify.FeatureTableOptions{})
	if got, err := os.ReadFile(table); err != nil || string(got) != want.String() {
		t.Errorf("feature table (%v):\n%.300s\nwant\n%.300s", err, got, want.String())
	}
}

// checkSums requires the report's per-feature sums to be its totals.
func checkSums(t *testing.T, r *smoothanonpb.RunReport) {
	t.Helper()
	f := r.GetFeatures()
	if f.GetInput().GetHeld().GetSum() != r.EntriesIn || f.GetInput().GetSuppressed().GetSum() != r.Suppressed ||
		f.GetInput().GetCreated().GetSum() != r.Created || f.GetRelease().GetReleased().GetSum() != r.EntriesOut || r.EntriesIn == 0 {
		t.Errorf("features sum to held %d suppressed %d created %d released %d; report %d %d %d %d",
			f.GetInput().GetHeld().GetSum(), f.GetInput().GetSuppressed().GetSum(), f.GetInput().GetCreated().GetSum(),
			f.GetRelease().GetReleased().GetSum(), r.EntriesIn, r.Suppressed, r.Created, r.EntriesOut)
	}
}

// TestFeatureReport: solve, baseline and run (prism) report every
// feature and write the full table, equal to the in-process accounting
// of their release; with pseudonyms the sums still hold.
func TestFeatureReport(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	m := writeSolveInput(t, in, 60)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"solve", []string{"solve", "--k", "5"}},
		{"solve nonsmooth", []string{"solve", "--k", "5", "--mode", "nonsmooth"}},
		{"mondrian", []string{"baseline", "--method", "mondrian", "--k", "5"}},
		{"rr_edge", []string{"baseline", "--method", "rr_edge", "--epsilon", "2"}},
		{"run", []string{"run", "--k", "5", "--chunk_size", "20", "--pool_share", "0.4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			out := filepath.Join(d, "rel.parquet")
			if c.args[0] == "run" {
				out = filepath.Join(d, "rel")
			}
			report, table := filepath.Join(d, "r.json"), filepath.Join(d, "sub", "features.csv")
			args := append(c.args, "--input", in, "--output", out, "--metrics_out", report, "--feature_report", table, "--user_ids", "keep")
			if code, _, stderr := cli(args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkAccounting(t, m, out, report, table)

			// Pseudonyms: the same sums, a table of the same features.
			d = t.TempDir()
			out, report, table = filepath.Join(d, filepath.Base(out)), filepath.Join(d, "r.json"), filepath.Join(d, "f.csv")
			args = append(c.args, "--input", in, "--output", out, "--metrics_out", report, "--feature_report", table)
			if code, _, stderr := cli(args...); code != 0 {
				t.Fatalf("pseudonyms: exit %d: %s", code, stderr)
			}
			r := readReport(t, report)
			checkSums(t, r)
			b, err := os.ReadFile(table)
			if lines := strings.Count(string(b), "\n"); err != nil || int64(lines) != 1+r.Features.Input.Features+r.Features.Input.NewFeatures {
				t.Errorf("pseudonyms: table of %d lines (%v) for %d features", lines, err, r.Features.Input.Features+r.Features.Input.NewFeatures)
			}
		})
	}
}

// TestFeatureReportRefused: a feature table over the input, the release,
// the report or a file that is not one is refused before any work, and
// one that a missed gate or a failed verification would go with is never
// written.
func TestFeatureReportRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	writeSolveInput(t, in, 40)
	inBytes, _ := os.ReadFile(in)
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("mine\n"), 0o644)
	out, report := filepath.Join(dir, "o.parquet"), filepath.Join(dir, "r.json")
	for _, c := range []struct {
		name  string
		args  []string
		table string
		code  int
		want  string
	}{
		{"the input", []string{"solve", "--k", "4", "--overwrite"}, in, 2, "is an input file"},
		{"the release", []string{"solve", "--k", "4"}, out, 2, "are both"},
		{"the report", []string{"solve", "--k", "4", "--metrics_out", report}, report, 2, "are both"},
		{"inside run's release", []string{"run", "--k", "4", "--output", filepath.Join(dir, "rel")}, filepath.Join(dir, "rel", "f.csv"), 2, "inside the release"},
		{"a file of the user's", []string{"baseline", "--k", "4", "--overwrite"}, notes, 2, "is not a feature table"},
		{"missed gate", []string{"solve", "--k", "4", "--min_jaccard", "0.999"}, filepath.Join(dir, "gate.csv"), exitGate, "quality gate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{c.args[0], "--input", in, "--output", out, "--feature_report", c.table}, c.args[1:]...)
			code, _, stderr := cli(args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want %d with %q: %s", code, c.code, c.want, stderr)
			}
			if b, _ := os.ReadFile(in); !bytes.Equal(b, inBytes) {
				t.Error("the input changed")
			}
			if b, _ := os.ReadFile(notes); string(b) != "mine\n" {
				t.Error("the user's file changed")
			}
			if c.table != in && c.table != notes {
				if _, err := os.Stat(c.table); err == nil {
					t.Errorf("%s written", c.table)
				}
			}
		})
	}
}
