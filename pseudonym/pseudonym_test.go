package pseudonym

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

func testKey(t *testing.T, b byte) Key {
	t.Helper()
	k, err := ParseKey("test", []byte(strings.Repeat(fmt.Sprintf("%02x", b), KeyBytes)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestID: a pseudonym is the first 128 bits of HMAC-SHA256(key, id) in hex,
// computed here with the standard library independently.
func TestID(t *testing.T) {
	k := testKey(t, 0xab)
	mp := NewMapper(k)
	for _, id := range []string{"", "u0000000001", "alice", "ünï"} {
		mac := hmac.New(sha256.New, []byte(strings.Repeat("\xab", KeyBytes)))
		mac.Write([]byte(id))
		want := hex.EncodeToString(mac.Sum(nil)[:16])
		if got := mp.ID(id); got != want {
			t.Errorf("ID(%q) = %s, want %s", id, got, want)
		}
	}
	if a, b := mp.ID("x"), NewMapper(testKey(t, 0xac)).ID("x"); a == b {
		t.Errorf("two keys give one pseudonym %s", a)
	}
}

func TestParseKey(t *testing.T) {
	good := strings.Repeat("0f", KeyBytes)
	for _, c := range []struct {
		text, err string
	}{
		{good, ""},
		{"  " + good + "\n", ""},
		{strings.ToUpper(good), ""},
		{good[:62], "64 hex digits, found 62"},
		{good + "00", "found 66"},
		{strings.Repeat("zz", KeyBytes), "hex digits only"},
		{strings.Repeat("00", KeyBytes), "all-zero"},
	} {
		_, err := ParseKey("src", []byte(c.text))
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseKey(%q) = %v, want %q", c.text, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), c.text) && len(c.text) > 8 {
			t.Errorf("error %q shows the key text", err)
		}
	}
	if s := fmt.Sprintf("%v %s %#v %+v", testKey(t, 1), testKey(t, 1), testKey(t, 1), testKey(t, 1)); strings.Contains(s, "0101") {
		t.Errorf("formatting a key shows it: %s", s)
	}
}

func TestSource(t *testing.T) {
	dir := t.TempDir()
	want := testKey(t, 0x5a)
	file := filepath.Join(dir, "key")
	if err := WriteKey(file, want); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	if err := WriteKey(file, want); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("WriteKey over an existing file: %v, want an error naming it", err)
	}
	if k, drawn, err := (Source{File: file}).Load(); err != nil || drawn || k != want {
		t.Errorf("file: drawn %v err %v, same key %v", drawn, err, k == want)
	}
	t.Setenv("PSEUDONYM_TEST_KEY", string(want.Text()))
	if k, drawn, err := (Source{Env: "PSEUDONYM_TEST_KEY"}).Load(); err != nil || drawn || k != want {
		t.Errorf("env: drawn %v err %v, same key %v", drawn, err, k == want)
	}
	// A drawn key is new each time, and written only where asked.
	out := filepath.Join(dir, "drawn")
	a, drawn, err := (Source{Out: out}).Load()
	if err != nil || !drawn {
		t.Fatalf("draw: %v %v", drawn, err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("Load wrote the drawn key; only its publish may (release.Run.Finish)")
	}
	if err := WriteKey(out, a); err != nil {
		t.Fatal(err)
	}
	b, _, _ := Source{}.Load()
	if a == b {
		t.Error("two drawn keys are equal")
	}
	if back, _, err := (Source{File: out}).Load(); err != nil || back != a {
		t.Errorf("reading the drawn key back: %v, same %v", err, back == a)
	}
	for _, c := range []struct {
		src Source
		err string
	}{
		{Source{File: file, Env: "X"}, "both set"},
		{Source{File: file, Out: out + "2"}, "is for a drawn key"},
		{Source{File: filepath.Join(dir, "missing")}, "missing: no such file"},
		{Source{Env: "PSEUDONYM_TEST_UNSET"}, "PSEUDONYM_TEST_UNSET: the environment variable is not set"},
		{Source{File: filepath.Join(dir)}, "not a regular file"},
	} {
		_, _, err := c.src.Load()
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.src, err, c.err)
		}
	}
	var ke *KeyError
	if _, _, err := (Source{Env: "PSEUDONYM_TEST_UNSET"}).Load(); !errors.As(err, &ke) {
		t.Errorf("%T is not a *KeyError", err)
	}
}

func TestMatrix(t *testing.T) {
	m := matrix.New(3, 0)
	m.Append("a", []uint32{1})
	m.Append("b", []uint32{2, 3})
	m.Append("c", nil)
	k := testKey(t, 7)
	p, err := Matrix(m, k)
	if err != nil {
		t.Fatal(err)
	}
	mp := NewMapper(k)
	for i, u := range m.Users {
		if p.Users[i] != mp.ID(u) || fmt.Sprint(p.Row(i)) != fmt.Sprint(m.Row(i)) {
			t.Errorf("row %d: %s %v, want %s %v", i, p.Users[i], p.Row(i), mp.ID(u), m.Row(i))
		}
	}
	if m.Users[0] != "a" {
		t.Error("Matrix changed its input")
	}
	// A forced collision: two ids, one pseudonym.
	_, err = mapUsers(m, func(u string) string { return map[string]string{"a": "p", "b": "q", "c": "p"}[u] })
	var ce *CollisionError
	if !errors.As(err, &ce) || ce.A != "a" || ce.B != "c" || ce.Pseudonym != "p" {
		t.Errorf("collision: %v", err)
	}
}

// TestFingerprint: stable for a key, different across keys, and not a
// prefix of anything the key's text or HMAC show.
func TestFingerprint(t *testing.T) {
	a, b := testKey(t, 1), testKey(t, 2)
	if a.Fingerprint() != testKey(t, 1).Fingerprint() || len(a.Fingerprint()) != 16 {
		t.Fatalf("fingerprint %q not stable or not 16 hex digits", a.Fingerprint())
	}
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("two keys share a fingerprint")
	}
	if strings.Contains(string(a.Text()), a.Fingerprint()) || strings.Contains(NewMapper(a).ID(""), a.Fingerprint()) {
		t.Fatal("the fingerprint shows part of the key or of its HMAC")
	}
}
