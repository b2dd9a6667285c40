package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/sensitive"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

func writeList(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSensitiveSolveVerify: solve under a list publishes a release that
// records it and that verify passes with the same list; verify refuses
// another list, sensitive_k or policy, and notes a list it is not given.
func TestSensitiveSolveVerify(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	if code, _, stderr := genCLI("gen", "--model", "userlists", "--rows", "3000", "--columns", "300", "--output", in); code != 0 {
		t.Fatal(stderr)
	}
	list := writeList(t, filepath.Join(dir, "s.txt"), "0\n3\n7\n10\n20\n")
	out := filepath.Join(dir, "rel.parquet")
	code, _, stderr := genCLI("solve", "--input", in, "--output", out, "--k", "4", "--sensitive", list, "--sensitive_k", "8", "--user_ids", "keep", "--metrics_out", filepath.Join(dir, "r.json"))
	if code != 0 {
		t.Fatalf("solve: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	rep := parseReport(t, string(b))
	if s := rep.Sensitive; s == nil || s.Held == 0 || s.Released == 0 || s.Created != 0 || s.Violations != 0 || s.Features != 5 {
		t.Fatalf("solve's sensitive figures %v", rep.Sensitive)
	}
	verifyArgs := []string{"verify", "--input", in, "--output", out, "--k", "4"}
	if code, stdout, stderr := genCLI(append(verifyArgs, "--sensitive", list, "--sensitive_k", "8")...); code != 0 || parseReport(t, stdout).Sensitive.GetReleased() != rep.Sensitive.Released {
		t.Fatalf("verify: exit %d: %s", code, stderr)
	}
	same := writeList(t, filepath.Join(dir, "same.txt"), "20\n010\n07\n3\n00\n")
	if code, _, stderr := genCLI(append(verifyArgs, "--sensitive", same, "--sensitive_k", "8")...); code != 0 {
		t.Errorf("verify with the same ids written otherwise: exit %d: %s", code, stderr)
	}
	other := writeList(t, filepath.Join(dir, "o.txt"), "0\n3\n7\n10\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sensitive", other, "--sensitive_k", "8"}, "another sensitive list"},
		{[]string{"--sensitive", list}, "sensitive_k = 8, not 4"},
		{[]string{"--sensitive", list, "--sensitive_k", "8", "--sensitive_policy", "drop"}, "policy show, not drop"},
		{[]string{"--sensitive_k", "8"}, "--sensitive_k without --sensitive"},
		{[]string{"--sensitive", list, "--sensitive_k", "3"}, "sensitive_k = 3 is smaller than k = 4"},
		{[]string{"--sensitive", filepath.Join(dir, "missing.txt")}, "missing.txt"},
	} {
		if code, _, stderr := genCLI(append(verifyArgs, c.args...)...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("verify %q: exit %d, stderr %s; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if code, _, stderr := genCLI(verifyArgs...); code != 2 || !strings.Contains(stderr, "records a sensitive list") {
		t.Errorf("verify without the list: exit %d, stderr %s", code, stderr)
	}
	names := writeList(t, filepath.Join(dir, "names.txt"), "3\n/health\n")
	runOut := filepath.Join(dir, "run")
	if code, _, stderr := genCLI("run", "--input", in, "--output", runOut, "--k", "4", "--sensitive", names); code != 2 || !strings.Contains(stderr, `"/health" is not a feature id`) {
		t.Errorf("run of ids with a name listed: exit %d, stderr %s", code, stderr)
	}
	if _, err := os.Stat(runOut); !os.IsNotExist(err) {
		t.Errorf("run refused, yet %s exists (%v)", runOut, err)
	}
	// A release made without a list is not one made with it.
	plain := filepath.Join(dir, "plain.parquet")
	if code, _, stderr := genCLI("solve", "--input", in, "--output", plain, "--k", "4", "--user_ids", "keep"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := genCLI("verify", "--input", in, "--output", plain, "--k", "4", "--sensitive", list); code != 2 || !strings.Contains(stderr, "made without --sensitive") {
		t.Errorf("plain release with a list: exit %d, stderr %s", code, stderr)
	}
}

// TestSensitiveVerifyRefusesViolations: hand-made releases that record
// the list but break the rule fail verify with exit 1.
func TestSensitiveVerifyRefusesViolations(t *testing.T) {
	dir := t.TempDir()
	in := writeVerifyFile(t, filepath.Join(dir, "in.parquet"),
		verifyRow{"a", []uint32{1, 9}}, verifyRow{"b", []uint32{1, 9}}, verifyRow{"c", []uint32{1}}, verifyRow{"d", []uint32{1, 9}})
	listPath := writeList(t, filepath.Join(dir, "s.txt"), "9\n")
	l, err := sensitive.Parse(strings.NewReader("9\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		p     solver.Params
		rows  [][]uint32
		flags []string
		want  string
	}{
		{"created for c", solver.Params{K: 2}, [][]uint32{{1, 9}, {1, 9}, {1, 9}, {1, 9}}, nil, "never created"},
		{"class below sensitive_k", solver.Params{K: 2, SensitiveK: 3}, [][]uint32{{1, 9}, {1, 9}, {1}, {1}}, []string{"--sensitive_k", "3"}, "smaller than sensitive_k = 3"},
		{"shown under drop", solver.Params{K: 2, SensitivePolicy: solver.SensitiveDrop}, [][]uint32{{1, 9}, {1, 9}, {1}, {1}}, []string{"--sensitive_policy", "drop"}, "policy drop releases none"},
	} {
		m := matrix.New(0, 0)
		for i, r := range c.rows {
			m.Append(string(rune('a'+i)), r)
		}
		out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".parquet")
		md := release.FileMetadata(nil, sensitive.NewRecord(l, c.p).String())
		if err := matrix.WriteMatrix(out, m, matrix.WriterOptions{Metadata: md}); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"verify", "--input", in, "--output", out, "--k", "2", "--sensitive", listPath}, c.flags...)
		if code, stdout, stderr := genCLI(args...); code != 1 || !strings.Contains(stderr, c.want) || parseReport(t, stdout).Sensitive.GetViolations() == 0 {
			t.Errorf("%s: exit %d, stderr %s; want 1 and %q", c.name, code, stderr, c.want)
		}
	}
}

// TestSensitiveNames: solve resolves a list of names through the input's
// own names, and run through the names its job numbers; each release
// passes verify with the list.
func TestSensitiveNames(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	if code, _, stderr := genCLI("gen", "--model", "userlists", "--rows", "2000", "--columns", "100", "--feature_names", "--output", in); code != 0 {
		t.Fatal(stderr)
	}
	list := writeList(t, filepath.Join(dir, "s.txt"), "/interest/0000000000\n/interest/0000000001\n/not/held\n")
	out := filepath.Join(dir, "rel.parquet")
	table := filepath.Join(dir, "features.csv")
	code, _, stderr := genCLI("solve", "--input", in, "--output", out, "--k", "4", "--sensitive", list, "--user_ids", "keep", "--metrics_out", filepath.Join(dir, "r.json"), "--feature_report", table)
	if code != 0 || !strings.Contains(stderr, "1 of the 3 entries of --sensitive") {
		t.Fatalf("solve: exit %d: %s", code, stderr)
	}
	checkSensitiveColumn(t, table, "/interest/0000000000", "/interest/0000000001")
	b, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	if s := parseReport(t, string(b)).Sensitive; s.GetHeld() == 0 || s.GetCreated() != 0 || s.GetFeatures() != 3 {
		t.Fatalf("figures %v", s)
	}
	if code, _, stderr := genCLI("verify", "--input", in, "--output", out, "--k", "4", "--sensitive", list); code != 0 {
		t.Fatalf("verify: exit %d: %s", code, stderr)
	}
	run := filepath.Join(dir, "run")
	if code, _, stderr := genCLI("run", "--input", in, "--output", run, "--k", "4", "--sensitive", list, "--user_ids", "keep"); code != 0 || !strings.Contains(stderr, "1 of the 3 entries of --sensitive") {
		t.Fatalf("run with names: exit %d, stderr %s", code, stderr)
	}
	if code, _, stderr := genCLI("verify", "--input", in, "--output", run, "--k", "4", "--sensitive", list); code != 0 {
		t.Fatalf("verify the run's release: exit %d: %s", code, stderr)
	}
	runTable := filepath.Join(dir, "run-features.csv")
	if code, _, stderr := genCLI("run", "--input", in, "--output", filepath.Join(dir, "run2"), "--k", "4", "--sensitive", list, "--feature_report", runTable); code != 0 {
		t.Fatalf("run with a feature table: exit %d: %s", code, stderr)
	}
	checkSensitiveColumn(t, runTable, "/interest/0000000000", "/interest/0000000001")
	empty := writeList(t, filepath.Join(dir, "empty.txt"), "\n")
	if code, _, stderr := genCLI("solve", "--input", in, "--output", filepath.Join(dir, "y.parquet"), "--k", "4", "--sensitive", empty); code != 2 || !strings.Contains(stderr, "no entries") {
		t.Errorf("empty list: exit %d, stderr %s", code, stderr)
	}
	bad := writeList(t, filepath.Join(dir, "bad.txt"), "ok\n\xff\n")
	if code, _, stderr := genCLI("solve", "--input", in, "--output", filepath.Join(dir, "x.parquet"), "--k", "4", "--sensitive", bad); code != 2 || !strings.Contains(stderr, "line 2: not UTF-8") {
		t.Errorf("non-UTF-8 list: exit %d, stderr %s", code, stderr)
	}
}

// TestSensitiveMondrian: baseline --method mondrian follows the rule
// (classes below sensitive_k show no sensitive feature) and records the
// list; randomized response refuses one.
func TestSensitiveMondrian(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	if code, _, stderr := genCLI("gen", "--model", "userlists", "--rows", "3000", "--columns", "200", "--output", in); code != 0 {
		t.Fatal(stderr)
	}
	list := writeList(t, filepath.Join(dir, "s.txt"), "0\n1\n2\n5\n")
	out := filepath.Join(dir, "m.parquet")
	args := []string{"baseline", "--method", "mondrian", "--input", in, "--output", out, "--k", "4", "--sensitive", list, "--sensitive_k", "50", "--user_ids", "keep"}
	if code, _, stderr := genCLI(args...); code != 0 {
		t.Fatalf("mondrian: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := genCLI("verify", "--input", in, "--output", out, "--k", "4", "--mode", "nonsmooth", "--sensitive", list, "--sensitive_k", "50")
	if code != 0 || parseReport(t, stdout).Sensitive.GetHeld() == 0 {
		t.Fatalf("verify: exit %d: %s", code, stderr)
	}
	if code, _, stderr := genCLI("baseline", "--method", "rr_edge", "--epsilon", "1", "--input", in, "--output", filepath.Join(dir, "rr.parquet"), "--sensitive", list); code != 2 || !strings.Contains(stderr, "for --method mondrian") {
		t.Errorf("rr with a list: exit %d, stderr %s", code, stderr)
	}
	if code, _, stderr := genCLI(append(args[:len(args)-4], "--sensitive_k", "3")...); code != 2 || !strings.Contains(stderr, "smaller than k") {
		t.Errorf("sensitive_k below k: exit %d, stderr %s", code, stderr)
	}
}

// TestSensitiveAssess: assess prices releases under the list (a list of
// the most held interests costs Jaccard), and refuses a sensitive_k
// below the largest k priced.
func TestSensitiveAssess(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	if code, _, stderr := genCLI("gen", "--model", "userlists", "--rows", "3000", "--columns", "2000", "--output", in); code != 0 {
		t.Fatal(stderr)
	}
	list := writeList(t, filepath.Join(dir, "s.txt"), "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n")
	price := func(extra ...string) float64 {
		t.Helper()
		args := append([]string{"assess", "--input", in, "--k", "4", "--mode", "smooth", "--report", "-"}, extra...)
		code, stdout, stderr := genCLI(args...)
		if code != 0 {
			t.Fatalf("assess %q: exit %d: %s", extra, code, stderr)
		}
		a := &smoothanonpb.Assessment{}
		if err := protojson.Unmarshal([]byte(stdout[strings.Index(stdout, "{"):]), a); err != nil {
			t.Fatal(err)
		}
		return a.Price[0].GetPredicted().GetJaccard()
	}
	plain, ruled := price(), price("--sensitive", list, "--sensitive_k", "16")
	if ruled >= plain {
		t.Errorf("priced Jaccard %.4f under the list, %.4f without", ruled, plain)
	}
	if code, _, stderr := genCLI("assess", "--input", in, "--k", "4,8", "--sensitive", list, "--sensitive_k", "4"); code != 2 || !strings.Contains(stderr, "smaller than k = 8") {
		t.Errorf("sensitive_k below k: exit %d, stderr %s", code, stderr)
	}
}

// TestSensitivePseudonymsWithoutKey: a pseudonymized release checked
// without its key still has its sensitive classes checked.
func TestSensitivePseudonymsWithoutKey(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	if code, _, stderr := genCLI("gen", "--model", "userlists", "--rows", "2000", "--columns", "200", "--output", in); code != 0 {
		t.Fatal(stderr)
	}
	list := writeList(t, filepath.Join(dir, "s.txt"), "0\n1\n2\n")
	out := filepath.Join(dir, "rel.parquet")
	if code, _, stderr := genCLI("solve", "--input", in, "--output", out, "--k", "4", "--sensitive", list); code != 0 {
		t.Fatalf("solve: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := genCLI("verify", "--input", in, "--output", out, "--k", "4", "--sensitive", list)
	r := parseReport(t, stdout)
	if code != 0 || !r.UsersUnmatched || r.Sensitive.GetHeld() == 0 || !slices.Contains(r.Checks, verify.CheckSensitive) {
		t.Fatalf("verify without the key: exit %d, report %v: %s", code, r, stderr)
	}
}

// checkSensitiveColumn: the feature table at path has the sensitive
// column, 1 on exactly the features named in want.
func checkSensitiveColumn(t *testing.T, path string, want ...string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("feature table %s: %d rows, %v", path, len(rows), err)
	}
	if got := strings.Join(rows[0], ","); got != verify.FeatureTableHeader+","+verify.SensitiveColumn {
		t.Fatalf("header %q", got)
	}
	var marked []string
	for _, r := range rows[1:] {
		if r[len(r)-1] == "1" {
			marked = append(marked, r[0])
		} else if r[len(r)-1] != "0" {
			t.Fatalf("row %q: sensitive field not 0 or 1", r)
		}
	}
	if !slices.Equal(marked, want) {
		t.Errorf("marked %q, want %q", marked, want)
	}
}
