package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

type verifyRow struct {
	user  string
	feats []uint32
}

func writeVerifyFile(t *testing.T, path string, rows ...verifyRow) string {
	t.Helper()
	m := matrix.New(0, 0)
	for _, r := range rows {
		m.Append(r.user, r.feats)
	}
	if err := matrix.WriteMatrix(path, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	return path
}

func parseReport(t *testing.T, stdout string) *smoothanonpb.RunReport {
	t.Helper()
	var r smoothanonpb.RunReport
	if err := protojson.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not one RunReport: %v\n%s", err, stdout)
	}
	return &r
}

func TestVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	in := writeVerifyFile(t, filepath.Join(dir, "in.parquet"),
		verifyRow{"a", []uint32{1, 2, 3}}, verifyRow{"b", []uint32{1, 2}}, verifyRow{"c", []uint32{2, 4}},
		verifyRow{"d", []uint32{5}}, verifyRow{"e", []uint32{5, 6}})
	good := writeVerifyFile(t, filepath.Join(dir, "good.parquet"),
		verifyRow{"e", []uint32{5, 6}}, verifyRow{"c", []uint32{1, 2}}, verifyRow{"a", []uint32{1, 2}},
		verifyRow{"d", []uint32{5, 6}}, verifyRow{"b", []uint32{1, 2}})
	// The release is also valid when sharded into a directory.
	shards := filepath.Join(dir, "shards")
	writeReleaseDir(t, shards, nil,
		usersMatrix(map[string][]uint32{"e": {5, 6}, "c": {1, 2}}),
		usersMatrix(map[string][]uint32{"a": {1, 2}, "d": {5, 6}, "b": {1, 2}}))

	for _, out := range []string{good, shards} {
		code, stdout, stderr := genCLI("verify", "--input", in, "--output", out, "--k", "2", "--mode", "smooth")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", out, code, stderr)
		}
		r := parseReport(t, stdout)
		if !r.Valid || r.Classes != 2 || r.EntriesKept != 8 || r.Jaccard < 0.666 || r.Jaccard > 0.667 || r.Mode != "smooth" || r.K != 2 {
			t.Errorf("report %+v", r)
		}
		if !strings.Contains(stdout, `"entries_kept"`) || !strings.Contains(stdout, `"valid"`) {
			t.Errorf("JSON lacks snake_case fields: %s", stdout)
		}
	}

	// Invalid: k=3, and nonsmooth (created entries): exit 1, problems named.
	code, stdout, stderr := genCLI("verify", "--input", in, "--output", good, "--k", "3")
	if code != 1 || !strings.Contains(stderr, `problem: class of 2 users (e.g. release row 0) is smaller than k = 3`) || parseReport(t, stdout).Valid {
		t.Errorf("k=3: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	code, _, stderr = genCLI("verify", "--input", in, "--output", good, "--k", "2", "--mode", "nonsmooth")
	if code != 1 || strings.Count(stderr, "created entries") != 2 {
		t.Errorf("nonsmooth: exit %d, stderr %s", code, stderr)
	}
	// A repeated user in the release is reported, not refused.
	dup := writeVerifyFile(t, filepath.Join(dir, "dup.parquet"),
		verifyRow{"a", []uint32{1, 2}}, verifyRow{"b", []uint32{1, 2}}, verifyRow{"c", []uint32{1, 2}},
		verifyRow{"d", []uint32{5, 6}}, verifyRow{"e", []uint32{5, 6}}, verifyRow{"a", []uint32{1, 2}})
	code, stdout, stderr = genCLI("verify", "--input", in, "--output", dup, "--k", "2")
	if code != 1 || !strings.Contains(stderr, `release rows 0 and 5: one user id`) || parseReport(t, stdout).DuplicateUsers != 1 {
		t.Errorf("duplicate: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// A repeated user in the input needs --dedupe=union.
	in2 := writeVerifyFile(t, filepath.Join(dir, "in2.parquet"), verifyRow{"a", []uint32{1}}, verifyRow{"b", []uint32{1}}, verifyRow{"a", []uint32{2}})
	out2 := writeVerifyFile(t, filepath.Join(dir, "out2.parquet"), verifyRow{"a", []uint32{1}}, verifyRow{"b", []uint32{1}})
	code, _, stderr = genCLI("verify", "--input", in2, "--output", out2, "--k", "2")
	if code != 2 || stderr != "smoothanon verify: "+in2+": row 2: user id repeats row 0 (merge repeats, e.g. --dedupe=union)\n" {
		t.Errorf("input repeats, refuse: exit %d, stderr %s", code, stderr)
	}
	code, _, stderr = genCLI("verify", "--input", in2, "--output", out2, "--k", "2", "--dedupe", "union")
	if code != 0 {
		t.Errorf("input repeats, union: exit %d, stderr %s", code, stderr)
	}
}

func TestVerifyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeVerifyFile(t, filepath.Join(dir, "in.parquet"), verifyRow{"a", []uint32{1}})
	notParquet := filepath.Join(dir, "x.parquet")
	os.WriteFile(notParquet, []byte("hello"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--output", in, "--k", "2"}, "missing --input"},
		{[]string{"verify", "--input", in, "--k", "2"}, "missing --output"},
		{[]string{"verify", "--input", in, "--output", in}, "missing --k"},
		{[]string{"verify", "--input", in, "--output", in, "--k", "-2"}, "--k = -2"},
		{[]string{"verify", "--input", in, "--output", in, "--k", "2", "--mode", "strict"}, `invalid mode "strict"`},
		{[]string{"verify", "--input", in, "--output", in, "--k", "2", "--dedupe", "first"}, `invalid dedupe policy "first"`},
		{[]string{"verify", "--input", filepath.Join(dir, "missing.parquet"), "--output", in, "--k", "2"}, "missing.parquet: no such file"},
		{[]string{"verify", "--input", in, "--output", notParquet, "--k", "2"}, "not a readable Parquet file"},
		{[]string{"verify", "--input", in, "--output", in, "--k", "x"}, "invalid value"},
	}
	for _, tc := range tests {
		code, stdout, stderr := genCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}
