package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
)

// genCLI runs the CLI in-process and returns exit code, stdout and stderr.
func genCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenSBM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sbm.parquet")
	code, _, stderr := genCLI("gen", "--output", path, "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _, err := matrix.ReadMatrix(path, matrix.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := gen.SBM(gen.PaperSBM(3))
	if !got.Equal(want) {
		t.Error("gen --model sbm output differs from gen.SBM(PaperSBM(3))")
	}
	if !strings.Contains(stderr, "1024 users") || !strings.Contains(stderr, "list form") {
		t.Errorf("stderr %q", stderr)
	}
	code, _, stderr = genCLI("gen", "--model", "sbm", "--output", path, "--rows", "12", "--block", "4", "--q", "1", "--p", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _, _ = matrix.ReadMatrix(path, matrix.ReadOptions{})
	if got.NumRows() != 12 || got.NumEntries() != 48 {
		t.Errorf("block diagonal: %d rows %d entries", got.NumRows(), got.NumEntries())
	}
}

func TestGenUserLists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ul.parquet")
	code, _, stderr := genCLI("gen", "--model", "userlists", "--output", path, "--rows", "500",
		"--columns", "300", "--mean_degree", "3", "--zipf", "1.5", "--seed", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _, err := matrix.ReadMatrix(path, matrix.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := gen.UserListsMatrix(gen.UserListsParams{Rows: 500, Columns: 300, MeanDegree: 3, Zipf: 1.5, Seed: 2})
	if !got.Equal(want) {
		t.Error("gen --model userlists output differs from gen.UserListsMatrix")
	}
}

// TestGenLongForm: --shape long writes the same users one row per pair,
// read back by the long-form reader as the list form's rows with
// features (the generator's users all have some).
func TestGenLongForm(t *testing.T) {
	dir := t.TempDir()
	list, long := filepath.Join(dir, "list.parquet"), filepath.Join(dir, "long.parquet")
	args := []string{"gen", "--model", "userlists", "--rows", "400", "--columns", "200", "--mean_degree", "4", "--seed", "5"}
	for _, c := range []struct{ path, shape string }{{list, "list"}, {long, "long"}} {
		if code, _, stderr := genCLI(append(args, "--output", c.path, "--shape", c.shape)...); code != 0 || !strings.Contains(stderr, c.shape+" form") {
			t.Fatalf("--shape %s: exit %d: %s", c.shape, code, stderr)
		}
	}
	a, _, err := matrix.ReadMatrix(list, matrix.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, st, err := matrix.ReadMatrix(long, matrix.ReadOptions{})
	if err != nil || st.Layout.Shape != matrix.ShapeLong || st.Pairs != a.NumEntries() || !a.Equal(b) {
		t.Errorf("long form read as %d users, %d pairs (%+v, %v); want the list form's %d users, %d entries",
			b.NumRows(), st.Pairs, st.Layout, err, a.NumRows(), a.NumEntries())
	}
}

func TestGenUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.parquet")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"gen"}, "missing --output"},
		{[]string{"gen", "--output", out, "--model", "erdos"}, `--model "erdos"`},
		{[]string{"gen", "--output", out, "--rows", "1000"}, "S = 64 does not divide N = 1000"},
		{[]string{"gen", "--output", out, "--q", "1.5"}, "Q = 1.5"},
		{[]string{"gen", "--output", out, "--zipf", "2"}, "--zipf not used by --model sbm"},
		{[]string{"gen", "--output", out, "--model", "userlists", "--block", "8"}, "--block not used by --model userlists"},
		{[]string{"gen", "--output", out, "--model", "userlists", "--zipf", "0.9"}, "zipf exponent = 0.9"},
		{[]string{"gen", "--output", out, "--rows", "-4"}, "--rows = -4"},
		{[]string{"gen", "--output", out, "extra"}, `unexpected argument "extra"`},
		{[]string{"gen", "--output", out, "--shape", "wide"}, `--shape "wide": want list or long`},
		{[]string{"gen", "--output", out, "--shape", "auto"}, `--shape "auto": want list or long`},
		{[]string{"gen", "--output", filepath.Join(out, "no", "dir.parquet")}, "no such file"},
	}
	for _, tc := range tests {
		code, _, stderr := genCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
