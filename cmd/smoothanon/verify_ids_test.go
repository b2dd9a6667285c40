package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
)

// TestVerifyPseudonyms: a pseudonymized release verifies in full with its
// key, says plainly that it cannot match users without it (stderr and
// report) while still checking class sizes, fails with a wrong key, and a
// key for a release with kept ids is refused.
func TestVerifyPseudonyms(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	writeSolveInput(t, in, 40)
	key, other := filepath.Join(dir, "key"), filepath.Join(dir, "other")
	for _, path := range []string{key, other} {
		if err := pseudonym.WriteKey(path, mustKey(t)); err != nil {
			t.Fatal(err)
		}
	}
	rel, keep := filepath.Join(dir, "rel.parquet"), filepath.Join(dir, "keep.parquet")
	for _, args := range [][]string{{"--output", rel, "--pseudonym_key_file", key}, {"--output", keep, "--user_ids", "keep"}} {
		if code, _, stderr := runSolveCLI(append([]string{"--input", in, "--k", "4", "--quiet"}, args...)...); code != 0 {
			t.Fatal(stderr)
		}
	}
	verify := func(args ...string) (int, *smoothanonpb.RunReport, string) {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"verify", "--input", in, "--k", "4"}, args...), &stdout, &stderr)
		var r smoothanonpb.RunReport
		if code != 2 {
			if err := protojson.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
		}
		return code, &r, stderr.String()
	}
	code, r, _ := verify("--output", rel, "--pseudonym_key_file", key)
	if code != 0 || !r.Valid || r.UsersUnmatched || r.Jaccard == 0 || r.UserIds != "pseudonym" {
		t.Errorf("with key: exit %d %v", code, r)
	}
	code, r, stderr := verify("--output", rel)
	if code != 0 || !r.UsersUnmatched || r.MinClass < 4 || len(r.Checks) == 0 || !strings.Contains(stderr, "users cannot be matched to the input") {
		t.Errorf("without key: exit %d %v %q", code, r, stderr)
	}
	if code, _, stderr = verify("--output", rel, "--pseudonym_key_file", other); code != 2 || !strings.Contains(stderr, "fingerprint") {
		t.Errorf("wrong key: exit %d %q, want 2 naming the fingerprints", code, stderr)
	}
	if code, _, stderr = verify("--output", keep, "--pseudonym_key_file", key); code != 2 || !strings.Contains(stderr, "not marked as pseudonymized") {
		t.Errorf("key for a kept release: exit %d %q", code, stderr)
	}
	if code, r, _ = verify("--output", keep); code != 0 || r.UsersUnmatched {
		t.Errorf("kept release: exit %d %v", code, r)
	}
}
