package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/verify"
)

func runBaselineCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(append([]string{"baseline"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// readReport parses a RunReport (protojson, whose whitespace is unstable by
// design, so tests parse it rather than match its text) from a local path
// or a bucket URI.
func readReport(t *testing.T, path string) *smoothanonpb.RunReport {
	t.Helper()
	js, err := storage.ReadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var r smoothanonpb.RunReport
	if err := protojson.Unmarshal(js, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

func TestBaselineCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	m := writeSolveInput(t, in, 40)

	out, metrics := filepath.Join(dir, "mondrian.parquet"), filepath.Join(dir, "mondrian.json")
	code, _, stderr := runBaselineCLI("--method", "mondrian", "--input", in, "--output", out, "--k", "5", "--metrics_out", metrics, "--user_ids", "keep")
	if code != 0 || !strings.Contains(stderr, "jaccard") {
		t.Fatalf("mondrian: exit %d: %s", code, stderr)
	}
	_, rel, err := readRelease(out, matrix.ReleaseOptions{}, matrix.ValuesIDs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := verify.Check(m, rel, verify.Params{K: 5, Mode: matrix.NonSmooth}); err != nil || !rep.Valid {
		t.Fatalf("mondrian release: %v %v", err, rep.GetProblems())
	}
	r := readReport(t, metrics)
	if !r.Valid || r.Mode != "nonsmooth" || r.K != 5 || r.Baseline.GetMethod() != "mondrian" || r.Baseline.GetPartitions() < 1 {
		t.Errorf("mondrian report: %v", r)
	}

	for _, method := range []string{"rr_edge", "rr_node"} {
		out, metrics := filepath.Join(dir, method+".parquet"), filepath.Join(dir, method+".json")
		code, _, stderr := runBaselineCLI("--method", method, "--input", in, "--output", out, "--epsilon", "2", "--seed", "4", "--metrics_out", metrics, "--user_ids", "keep")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", method, code, stderr)
		}
		_, rel, err := readRelease(out, matrix.ReleaseOptions{}, matrix.ValuesIDs, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := verify.Measure(m, rel)
		if err != nil {
			t.Fatal(err)
		}
		r := readReport(t, metrics)
		if !r.Valid || r.Mode != "" || r.Baseline.GetMethod() != method || r.Baseline.GetEpsilon() != 2 || r.Baseline.GetSeed() != 4 ||
			r.Baseline.GetFlipProbability() <= 0 || r.Jaccard != rep.Jaccard {
			t.Errorf("%s report: %v", method, r)
		}
	}
}

func TestBaselineErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	writeSolveInput(t, in, 10)
	out := filepath.Join(dir, "out.parquet")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--output", out, "--k", "2"}, "missing --input"},
		{[]string{"--input", in, "--k", "2"}, "missing --output"},
		{[]string{"--input", in, "--output", out}, "missing --k"},
		{[]string{"--input", in, "--output", out, "--method", "laplace"}, `"laplace"`},
		{[]string{"--input", in, "--output", out, "--k", "11"}, "k = 11 is larger than the number of rows (10)"},
		{[]string{"--input", in, "--output", out, "--k", "2", "--epsilon", "1"}, "are for the rr methods"},
		{[]string{"--input", in, "--output", out, "--k", "2", "--seed", "3"}, "are for the rr methods"},
		{[]string{"--input", in, "--output", out, "--k", "2", "--max_entries", "9"}, "are for the rr methods"},
		{[]string{"--input", in, "--output", out, "--method", "rr_edge", "--epsilon", "1", "--k", "0"}, "--k is for --method mondrian"},
		{[]string{"--input", in, "--output", out, "--method", "rr_edge"}, "epsilon = 0"},
		{[]string{"--input", in, "--output", out, "--method", "rr_edge", "--epsilon", "1", "--k", "2"}, "--k is for --method mondrian"},
		{[]string{"--input", in, "--output", out, "--method", "rr_node", "--epsilon", "1", "--max_entries", "20"}, "above the limit of 20"},
		{[]string{"--input", in, "--output", in, "--k", "2"}, "is an input file"},
		{[]string{"--input", filepath.Join(dir, "nope.parquet"), "--output", out, "--k", "2"}, "nope.parquet"},
	} {
		code, _, stderr := runBaselineCLI(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed run wrote %s", out)
	}
}
