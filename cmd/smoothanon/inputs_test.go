package main

import (
	"fmt"
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

// TestReleaseNotInput: solve and verify refuse a release as --input, with
// one line naming the path: a directory release, a glob or list of its
// shards, and a single-file release beside the input (solve --input p
// --output p/r1.parquet, then again into p/r2.parquet, read r1 as input
// and counted every person twice).
func TestReleaseNotInput(t *testing.T) {
	p := t.TempDir()
	in := filepath.Join(p, "in.parquet")
	writeSolveInput(t, in, 20)
	r1 := filepath.Join(p, "r1.parquet")
	if err := matrix.WriteMatrix(r1, writeSolveInputMatrix(20), matrix.WriterOptions{Metadata: releaseMD("")}); err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(t.TempDir(), "rel")
	m := writeReleaseDir(t, rel, releaseMD(""), writeSolveInputMatrix(20))
	shard := filepath.Join(rel, m.Shards[0].Name)
	for _, c := range []struct{ input, want string }{
		{p, r1 + ": is a release (Parquet metadata smoothanon.release); a release is never read as input"},
		{rel, rel + ": is a published release (it holds _SUCCESS); a release is never read as input"},
		{filepath.Join(rel, "*.parquet"), shard + ": is a shard of the published release " + rel + " (it holds _SUCCESS); a release is never read as input"},
		{in + "," + shard, shard + ": is a shard of the published release " + rel + " (it holds _SUCCESS); a release is never read as input"},
	} {
		for _, args := range [][]string{
			{"solve", "--input", c.input, "--output", filepath.Join(t.TempDir(), "r2.parquet"), "--k", "2"},
			{"verify", "--input", c.input, "--output", r1, "--k", "2"},
		} {
			code, _, stderr := genCLI(args...)
			if want := "smoothanon " + args[0] + ": " + c.want + "\n"; code != 2 || stderr != want {
				t.Errorf("%s --input %s: exit %d, stderr %q; want 2, %q", args[0], c.input, code, stderr, want)
			}
		}
	}
}

// writeSolveInputMatrix is the matrix writeSolveInput writes.
func writeSolveInputMatrix(n int) *matrix.Matrix {
	m := matrix.New(n, 0)
	for i := 0; i < n; i++ {
		g := uint32(i % 4)
		m.Append(fmt.Sprintf("user%03d", i), []uint32{10 * g, 10*g + 1, 10*g + 2 + uint32(i%3)})
	}
	return m
}
