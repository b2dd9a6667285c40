package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/verify"
)

func runSolveCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(append([]string{"solve"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// writeSolveInput writes n users in 4 groups of similar rows.
func writeSolveInput(t *testing.T, path string, n int) *matrix.Matrix {
	t.Helper()
	m := matrix.New(n, 0)
	for i := 0; i < n; i++ {
		g := uint32(i % 4)
		m.Append(fmt.Sprintf("user%03d", i), []uint32{10 * g, 10*g + 1, 10*g + 2 + uint32(i%3)})
	}
	if err := matrix.WriteMatrix(path, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSolveCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	m := writeSolveInput(t, in, 40)
	for _, mode := range []string{"smooth", "nonsmooth"} {
		for _, variant := range []string{"improved", "paper"} {
			out := filepath.Join(dir, mode+variant+".parquet")
			metrics := filepath.Join(dir, mode+variant+".json")
			search := map[string]string{"improved": "bounded", "paper": "exact"}[variant]
			code, _, stderr := runSolveCLI("--input", in, "--output", out, "--k", "5", "--mode", mode,
				"--variant", variant, "--search", search, "--seed", "3", "--metrics_out", metrics, "--user_ids", "keep")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, "jaccard") {
				t.Errorf("no summary on stderr: %q", stderr)
			}
			_, rel, err := readRelease(out, matrix.ReleaseOptions{}, matrix.ValuesIDs, nil)
			if err != nil {
				t.Fatal(err)
			}
			md, _ := matrix.ParseMode(mode)
			rep, _ := verify.Check(m, rel, verify.Params{K: 5, Mode: md})
			if !rep.Valid {
				t.Fatalf("%s/%s: written release invalid: %v", mode, variant, rep.Problems)
			}
			js, err := os.ReadFile(metrics)
			if err != nil {
				t.Fatal(err)
			}
			var r smoothanonpb.RunReport
			if err := protojson.Unmarshal(js, &r); err != nil {
				t.Fatalf("metrics: %v", err)
			}
			if !r.Valid || r.Solve.GetVariant() != variant || r.Solve.GetSeed() != 3 || r.Solve.GetClusters() < 1 || r.Mode != mode ||
				r.Solve.GetNeighbourSearch() == "" {
				t.Errorf("metrics report wrong: %v", &r)
			}
			if r.Jaccard != rep.Jaccard {
				t.Errorf("metrics jaccard %v, verify %v", r.Jaccard, rep.Jaccard)
			}
		}
	}
	// --start mondrian reaches the solver: the report says so, and the
	// release is valid.
	out, metrics := filepath.Join(dir, "mondrian.parquet"), filepath.Join(dir, "mondrian.json")
	if code, _, stderr := runSolveCLI("--input", in, "--output", out, "--k", "5", "--start", "mondrian", "--metrics_out", metrics, "--quiet"); code != 0 {
		t.Fatalf("--start mondrian: exit %d: %s", code, stderr)
	}
	var mr smoothanonpb.RunReport
	if js, err := os.ReadFile(metrics); err != nil || protojson.Unmarshal(js, &mr) != nil || !mr.Valid || mr.Solve.GetStart() != "mondrian" || mr.Solve.GetRestarts() != 0 {
		t.Errorf("--start mondrian: report %v (%v)", &mr, err)
	}
	// Same seed, same bytes (kept ids; pseudonyms need the same key too: TestSolvePseudonyms).
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	for _, out := range []string{a, b} {
		code, _, stderr := runSolveCLI("--input", in, "--output", out, "--k", "4", "--seed", "9", "--quiet", "--user_ids", "keep")
		if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "warning: --user_ids keep") {
			t.Fatalf("exit %d, stderr %q (want only the kept ids' warning with --quiet)", code, stderr)
		}
	}
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if !bytes.Equal(x, y) {
		t.Errorf("two runs with the same seed wrote different files")
	}
	// Metrics to stdout.
	code, stdout, _ := runSolveCLI("--input", in, "--output", filepath.Join(dir, "stdout.parquet"), "--k", "4", "--metrics_out", "-", "--quiet")
	var r smoothanonpb.RunReport
	if code != 0 || protojson.Unmarshal([]byte(stdout), &r) != nil || r.Solve == nil {
		t.Errorf("--metrics_out -: exit %d, stdout %q", code, stdout)
	}
}

func TestSolveErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	writeSolveInput(t, in, 10)
	out := filepath.Join(dir, "out.parquet")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--output", out, "--k", "2"}, "missing --input"},
		{[]string{"--input", in, "--k", "2"}, "missing --output"},
		{[]string{"--input", in, "--output", out}, "missing --k"},
		{[]string{"--input", in, "--output", out, "--k", "2", "--mode", "median"}, `"median"`},
		{[]string{"--input", in, "--output", out, "--k", "2", "--variant", "fast"}, `"fast"`},
		{[]string{"--input", in, "--output", out, "--k", "2", "--search", "approx"}, `"approx"`},
		{[]string{"--input", in, "--output", out, "--k", "2", "--start", "auto"}, `"auto"`},
		{[]string{"--input", in, "--output", out, "--k", "2", "--start", "mondrian", "--variant", "paper"}, "start mondrian needs variant improved"},
		{[]string{"--input", in, "--output", out, "--k", "2", "--beta", "0"}, `invalid value "0" for flag -beta: must be at least 1`},
		{[]string{"--input", in, "--output", out, "--k", "2", "--restarts", "0"}, `invalid value "0" for flag -restarts: must be at least 1`},
		{[]string{"--input", in, "--output", out, "--k", "2", "--workers", "-1"}, `invalid value "-1" for flag -workers: must be at least 0`},
		{[]string{"--input", in, "--output", out, "--k", "2", "--beta", "two"}, `invalid value "two" for flag -beta: not an integer`},
		{[]string{"--input", in, "--output", out, "--k", "2", "--dedupe", "merge"}, `"merge"`},
		{[]string{"--input", in, "--output", out, "--k", "11"}, "k = 11 is larger than the number of rows (10)"},
		{[]string{"--input", in, "--output", in, "--k", "2"}, "is an input file"},
		{[]string{"--input", filepath.Join(dir, "nope.parquet"), "--output", out, "--k", "2"}, "nope.parquet"},
	}
	for _, c := range cases {
		code, _, stderr := runSolveCLI(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed run wrote %s", out)
	}
}

// TestProgressPrinter: one status line at most every 200 ms whatever the
// stage (improve's candidates alternate their stage names), and every
// completed stage shown.
func TestProgressPrinter(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	p := newProgressPrinter(&buf, func() time.Time { return clock })
	step := func(ms int, stage string, done, total int) {
		clock = clock.Add(time.Duration(ms) * time.Millisecond)
		p(stage, done, total)
	}
	step(0, "refine (candidate 2/4)", 0, 12)   // printed: first call
	step(50, "refine (candidate 3/4)", 0, 12)  // within 200 ms: not printed
	step(50, "refine (candidate 2/4)", 1, 12)  // within 200 ms: not printed
	step(50, "split (candidate 3/4)", 40, 40)  // completed: printed
	step(250, "refine (candidate 3/4)", 1, 12) // after 200 ms: printed
	got := strings.Split(buf.String(), "\r\033[K")[1:]
	want := []string{"solve: refine (candidate 2/4) 0/12", "solve: split (candidate 3/4) 40/40", "solve: refine (candidate 3/4) 1/12"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("status lines %q, want %q", got, want)
	}
}
