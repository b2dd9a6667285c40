package pipeline

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// TestRunPseudonyms: on prism, a run with a pseudonym key publishes a
// release that holds no input id in any byte, whose files are marked,
// whose ids are the input's pseudonyms (it verifies against the input
// pseudonymized under the key), and whose report says so.
func TestRunPseudonyms(t *testing.T) {
	dir := t.TempDir()
	in, files := writeInput(t, dir, gen.SBMParams{N: 400, S: 40, Q: 0.5, P: 0.01, Seed: 5})
	key, err := pseudonym.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "out"),
		Solver: solver.Params{K: 4, Seed: 1}, ChunkSize: 200, Shards: 3, PseudonymKey: &key}
	res := runOK(t, p)
	if res.Report.UserIds != "pseudonym" {
		t.Errorf("report user_ids %q", res.Report.UserIds)
	}
	out, shards := readRelease(t, p.Output)
	for name, b := range shards {
		for _, u := range in.Users {
			if bytes.Contains(b, []byte(u)) {
				t.Fatalf("%s holds the input id %q", name, u)
			}
		}
	}
	rel, err := matrix.OpenRelease(p.Output, matrix.ReleaseOptions{VerifyChecksums: true})
	if err != nil || rel.UserIDs != "pseudonym" || rel.KeyFingerprint != key.Fingerprint() || len(rel.Files) != 3 {
		t.Errorf("release %+v %v, want 3 shards marked pseudonym under the key", rel, err)
	}
	pin, err := pseudonym.Matrix(in, key)
	if err != nil {
		t.Fatal(err)
	}
	chk, err := verify.Check(pin, out, verify.Params{K: 4, Mode: matrix.Smooth})
	if err != nil || !chk.Valid {
		t.Fatalf("release against the pseudonymized input: %v %v", err, chk.GetProblems())
	}
	if chk.Jaccard != res.Report.Jaccard {
		t.Errorf("Jaccard %.4f, report %.4f", chk.Jaccard, res.Report.Jaccard)
	}
}
