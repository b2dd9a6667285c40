package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
)

func readUsers(t *testing.T, path string) map[string]bool {
	t.Helper()
	_, m, err := readRelease(path, matrix.ReleaseOptions{}, matrix.ValuesIDs, nil)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]bool{}
	for _, u := range m.Users {
		users[u] = true
	}
	return users
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSolvePseudonyms: by default no input id appears in any byte of the
// release or the report; the same key and input give the same bytes, a
// different key gives a disjoint id set; the release is marked; a drawn
// key is written only where asked (0600) and re-derives the same release;
// keep gives the bytes of a release made without the flag's existence (no
// metadata) and a report that warns.
func TestSolvePseudonyms(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	m := writeSolveInput(t, in, 40)
	keyFile := filepath.Join(dir, "key")
	if err := pseudonym.WriteKey(keyFile, mustKey(t)); err != nil {
		t.Fatal(err)
	}
	solve := func(name string, extra ...string) (string, string) {
		out, rep := filepath.Join(dir, name+".parquet"), filepath.Join(dir, name+".json")
		args := append([]string{"--input", in, "--output", out, "--k", "4", "--seed", "2", "--metrics_out", rep, "--quiet"}, extra...)
		if code, _, stderr := runSolveCLI(args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		return out, rep
	}
	def, defRep := solve("default")
	for _, path := range []string{def, defRep} {
		b := mustRead(t, path)
		for _, u := range m.Users {
			if bytes.Contains(b, []byte(u)) {
				t.Fatalf("%s holds the input id %q", path, u)
			}
		}
	}
	if r := readReport(t, defRep); r.UserIds != "pseudonym" || r.LinkageWarning != "" {
		t.Error("report does not say user_ids pseudonym")
	}
	if rel, err := matrix.OpenRelease(def, matrix.ReleaseOptions{}); err != nil || rel.UserIDs != pseudonym.Pseudonymize.String() {
		t.Errorf("release not marked: %+v, %v", rel, err)
	}

	a, _ := solve("a", "--pseudonym_key_file", keyFile)
	b, _ := solve("b", "--pseudonym_key_file", keyFile)
	if !bytes.Equal(mustRead(t, a), mustRead(t, b)) {
		t.Error("same key and input gave different bytes")
	}
	ua, ud := readUsers(t, a), readUsers(t, def)
	for u := range ua {
		if ud[u] {
			t.Errorf("pseudonym %s under two keys", u)
		}
	}
	if len(ua) != 40 || len(ud) != 40 {
		t.Errorf("%d and %d users, want 40", len(ua), len(ud))
	}

	// A drawn key written out re-derives the same ids.
	keyOut := filepath.Join(dir, "drawn.key")
	c, _ := solve("c", "--pseudonym_key_out", keyOut)
	if st, err := os.Stat(keyOut); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("drawn key: %v", err)
	}
	d, _ := solve("d", "--pseudonym_key_file", keyOut)
	if !bytes.Equal(mustRead(t, c), mustRead(t, d)) {
		t.Error("the written key does not reproduce its release")
	}
	for _, path := range []string{c, filepath.Join(dir, "c.json")} {
		if bytes.Contains(mustRead(t, path), bytes.TrimSpace(mustRead(t, keyOut))) {
			t.Errorf("%s holds the key", path)
		}
	}

	// keep: the input's ids, ordered by id, marked as a release with kept
	// ids, a warning in the report.
	keep, keepRep := solve("keep", "--user_ids", "keep")
	if got := readUsers(t, keep); !got["user000"] || len(got) != 40 {
		t.Errorf("keep lost the ids: %v", got)
	}
	// Pinned: the same input and seed give these bytes (the release as
	// before pseudonyms existed, with its rows in id order and the release
	// marker added).
	if h := fmt.Sprintf("%x", sha256.Sum256(mustRead(t, keep))); h != keepSHA256 {
		t.Errorf("keep release sha256 %s, want %s", h, keepSHA256)
	}
	if rel, err := matrix.OpenRelease(keep, matrix.ReleaseOptions{}); err != nil || rel.UserIDs != pseudonym.Keep.String() {
		t.Errorf("keep release is not marked keep: %+v, %v", rel, err)
	}
	if r := readReport(t, keepRep); r.UserIds != "keep" || !strings.Contains(r.LinkageWarning, "not protected") {
		t.Errorf("keep report lacks the mode or the warning: %v", r)
	}

	// Bad key flags: exit 2, one line, nothing written.
	t.Setenv("SOLVE_TEST_BADKEY", "xyz")
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--user_ids", "keep", "--pseudonym_key_file", keyFile}, "are for --user_ids pseudonym"},
		{[]string{"--user_ids", "hashed"}, `invalid user id mode "hashed"`},
		{[]string{"--pseudonym_key_env", "SOLVE_TEST_BADKEY"}, "SOLVE_TEST_BADKEY: a pseudonym key is 64 hex digits, found 3"},
		{[]string{"--pseudonym_key_file", filepath.Join(dir, "nokey")}, "nokey: no such file"},
		{[]string{"--pseudonym_key_out", keyOut}, "drawn.key exists (a key is never overwritten)"},
	} {
		out := filepath.Join(dir, "bad.parquet")
		code, _, stderr := runSolveCLI(append([]string{"--input", in, "--output", out, "--k", "4", "--quiet"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.err) {
			t.Errorf("%q: exit %d %q, want 2 and %q", c.args, code, stderr, c.err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q wrote a release", c.args)
		}
	}
}

func mustKey(t *testing.T) pseudonym.Key {
	t.Helper()
	k, err := pseudonym.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const keepSHA256 = "07cd665314bf7e1685ee3b965fd2860a7007eb13a76a08120de087c64f986701"
