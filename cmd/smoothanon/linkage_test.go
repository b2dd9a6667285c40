package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/linkage"
	"github.com/smoothanon/smoothanon/matrix"
)

func writeRelease2(t *testing.T, path string, rows map[string][]uint32) {
	t.Helper()
	m := matrix.New(0, 0)
	for _, u := range []string{"a", "b", "c", "d", "x", "y", "z", "w"} {
		if f, ok := rows[u]; ok {
			m.Append(u, f)
		}
	}
	if err := matrix.WriteMatrix(path, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestLinkageCommand: two releases that pin every user exit 1 with the
// figures; the same release twice exits 0; releases with disjoint ids are
// linked class to class; bad usage exits 2.
func TestLinkageCommand(t *testing.T) {
	dir := t.TempDir()
	r1, r2, r3 := filepath.Join(dir, "r1.parquet"), filepath.Join(dir, "r2"), filepath.Join(dir, "r3.parquet")
	writeRelease2(t, r1, map[string][]uint32{"a": {1}, "b": {1}, "c": {2}, "d": {2}})
	// r2 is a directory of two shards.
	writeReleaseDir(t, r2, nil, usersMatrix(map[string][]uint32{"a": {1}, "c": {1}}), usersMatrix(map[string][]uint32{"b": {2}, "d": {2}}))
	writeRelease2(t, r3, map[string][]uint32{"x": {1}, "y": {1}, "z": {2}, "w": {2}})

	run := func(args ...string) (int, *linkage.Report, string) {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"linkage"}, args...), &stdout, &stderr)
		var r linkage.Report
		if code != 2 {
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
		}
		return code, &r, stderr.String()
	}
	code, r, stderr := run("--release", r1, "--release", r2, "--k", "2")
	if code != 1 || r.Mode != "users" || r.Users.Pinned != 4 || r.Users.BelowK != 4 || !strings.Contains(stderr, "pinned to 1 for 4 (100.0%)") {
		t.Errorf("pinned: exit %d %+v %q", code, r.Users, stderr)
	}
	code, r, stderr = run("--release", r1, "--release", r1, "--k", "2")
	if code != 0 || r.Users.BelowK != 0 || r.Users.MinSet != 2 {
		t.Errorf("same release twice: exit %d %+v %q", code, r.Users, stderr)
	}
	code, r, stderr = run("--release", r1, "--release", r3, "--k", "2")
	if code != 0 || r.Mode != "classes" || r.ClassLinks[0].Matched != 2 || !strings.Contains(stderr, "do not join") {
		t.Errorf("disjoint ids: exit %d %+v %q", code, r, stderr)
	}
	for _, bad := range [][]string{
		{"--release", r1, "--k", "2"},
		{"--release", r1, "--release", filepath.Join(dir, "missing.parquet"), "--k", "2"},
		{"--release", r1, "--release", r2},
	} {
		if code, _, stderr := run(bad...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q", bad, code, stderr)
		}
	}
}
