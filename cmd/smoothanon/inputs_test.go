package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// TestSolveDuplicateAcrossFiles: an id repeated across two input files is
// reported by file and row of both occurrences, on one line, without the
// id.
func TestSolveDuplicateAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	writeSolveInput(t, a, 20)
	mb := matrix.New(0, 0)
	for _, u := range []string{"x1", "x2", "x3", "user000"} {
		mb.Append(u, []uint32{1})
	}
	if err := matrix.WriteMatrix(b, mb, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSolveCLI("--input", a+","+b, "--output", filepath.Join(dir, "out.parquet"), "--k", "2")
	want := "smoothanon solve: " + b + ": row 3: user id repeats " + a + " row 0 (merge repeats, e.g. --dedupe=union)\n"
	if code != 2 || stderr != want || strings.Contains(stderr, "user000") {
		t.Errorf("exit %d, stderr %q; want 2, %q", code, stderr, want)
	}
}
