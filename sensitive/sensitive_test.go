package sensitive

import (
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
)

func TestParse(t *testing.T) {
	l, err := Parse(strings.NewReader("7\r\n\n3\n7\n12\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Entries, []string{"12", "3", "7"}) {
		t.Fatalf("entries %q", l.Entries)
	}
	ids, err := l.IDs()
	if err != nil || !slices.Equal(ids, []uint32{3, 7, 12}) {
		t.Fatalf("ids %v %v", ids, err)
	}
	other, _ := Parse(strings.NewReader("12\n3\n7"))
	if l.Hash() != other.Hash() {
		t.Error("the hash depends on the order of the lines")
	}
	third, _ := Parse(strings.NewReader("12\n3\n8"))
	if l.Hash() == third.Hash() {
		t.Error("two lists share a hash")
	}
	if _, err := Parse(strings.NewReader("ok\n\xff\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("non-UTF-8 line: %v", err)
	}
	if l, err := Parse(strings.NewReader("\ufeff/a\n/b\n")); err != nil || l.Entries[0] != "/a" {
		t.Errorf("byte order mark: %q %v", l.Entries, err)
	}
	for _, empty := range []string{"", "\n\n", "\ufeff\n"} {
		if _, err := Parse(strings.NewReader(empty)); err == nil || !strings.Contains(err.Error(), "no entries") {
			t.Errorf("%q: %v", empty, err)
		}
	}
	if _, err := Parse(strings.NewReader(strings.Repeat("x", MaxLine+1))); err == nil {
		t.Error("an overlong line was read")
	}
	for _, bad := range []string{"-1", "4294967296", "/health"} {
		l, _ := Parse(strings.NewReader(bad))
		if _, err := l.IDs(); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q as ids: %v", bad, err)
		}
	}
}

func TestResolve(t *testing.T) {
	v, err := matrix.SortedVocab(matrix.ValuesStrings, [][]byte{[]byte("/food"), []byte("/health/diabetes"), []byte("/sports")})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := Parse(strings.NewReader("/health/diabetes\n/religion\n"))
	ids, err := l.Resolve(v)
	if err != nil || !slices.Equal(ids, []uint32{1}) {
		t.Fatalf("names: %v %v", ids, err)
	}
	if n := l.Unmatched(v); n != 1 {
		t.Errorf("unmatched %d, want 1 (/religion)", n)
	}
	iv, err := matrix.SortedVocab(matrix.ValuesIntegers, [][]byte{matrix.IntNameKey(nil, -5), matrix.IntNameKey(nil, 1<<40)})
	if err != nil {
		t.Fatal(err)
	}
	l, _ = Parse(strings.NewReader("1099511627776\n"))
	if ids, err := l.Resolve(iv); err != nil || !slices.Equal(ids, []uint32{1}) {
		t.Fatalf("integers: %v %v", ids, err)
	}
	l, _ = Parse(strings.NewReader("x\n"))
	if _, err := l.Resolve(iv); err == nil {
		t.Error("a string resolved against integer features")
	}
}

func TestRecord(t *testing.T) {
	l, _ := Parse(strings.NewReader("1\n2\n"))
	r := NewRecord(l, solver.Params{K: 8, SensitiveK: 32})
	back, err := ParseRecord(r.String())
	if err != nil || back != r {
		t.Fatalf("%v round-trips to %v, %v", r, back, err)
	}
	if r.K != 32 || NewRecord(l, solver.Params{K: 8}).K != 8 {
		t.Errorf("k: %d", r.K)
	}
	if err := Match(r.String(), r); err != nil {
		t.Fatal(err)
	}
	other, _ := Parse(strings.NewReader("1\n"))
	for _, c := range []struct {
		got  string
		want Record
		msg  string
	}{
		{"", r, "made without --sensitive"},
		{r.String(), NewRecord(other, solver.Params{K: 8, SensitiveK: 32}), "another sensitive list"},
		{r.String(), NewRecord(l, solver.Params{K: 8}), "sensitive_k = 32, not 8"},
		{r.String(), NewRecord(l, solver.Params{K: 8, SensitiveK: 32, SensitivePolicy: solver.SensitiveDrop}), "policy show, not drop"},
		{"sha256=ab k=3 policy=show", r, "malformed"},
		{"sha256=" + strings.Repeat("a", 64) + " k=0 policy=show", r, "malformed"},
		{"sha256=" + strings.Repeat("a", 64) + " k=3 policy=hide", r, "malformed"},
	} {
		if err := Match(c.got, c.want); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q vs %v: %v, want %q", c.got, c.want, err, c.msg)
		}
	}
}

func TestCanonical(t *testing.T) {
	for _, c := range []struct {
		values matrix.Values
		in     string
		want   []string
		err    string
	}{
		{matrix.ValuesIDs, "07\n7\n0\n012\n", []string{"0", "12", "7"}, ""},
		{matrix.ValuesIDs, "7\n/x\n", nil, `"/x" is not a feature id`},
		{matrix.ValuesIntegers, "-05\n-5\n0009\n1099511627776\n", []string{"-5", "1099511627776", "9"}, ""},
		{matrix.ValuesIntegers, "9\n9.5\n", nil, `"9.5" is not an integer`},
		{matrix.ValuesStrings, "07\n7\n", []string{"07", "7"}, ""},
		{matrix.ValuesAuto, "7\n", nil, "auto"},
	} {
		l, err := Parse(strings.NewReader(c.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.Canonical(c.values)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v %q: %v, want an error with %q", c.values, c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v %q: %v", c.values, c.in, err)
		} else if !slices.Equal(got.Entries, c.want) {
			t.Errorf("%v %q: %q, want %q", c.values, c.in, got.Entries, c.want)
		}
	}
	a, _ := Parse(strings.NewReader("07\n3\n"))
	b, _ := Parse(strings.NewReader("3\n7\n"))
	ca, _ := a.Canonical(matrix.ValuesIDs)
	cb, _ := b.Canonical(matrix.ValuesIDs)
	if ca.Hash() != cb.Hash() {
		t.Error("lists of the same ids hash apart")
	}
}
