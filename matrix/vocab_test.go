package matrix

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestSortedVocab: ids are the ranks of the names, whatever order they
// came in; integer names rank numerically, negatives first.
func TestSortedVocab(t *testing.T) {
	v, err := SortedVocab(ValuesStrings, [][]byte{[]byte("b"), []byte("a"), []byte("c"), []byte("a"), []byte("")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for id := range v.Len() {
		got = append(got, v.String(uint32(id)))
	}
	if !slices.Equal(got, []string{"", "a", "b", "c"}) {
		t.Errorf("sorted names %q", got)
	}
	if id, err := v.ID([]byte("c")); err != nil || id != 3 {
		t.Errorf("ID(c) = %d, %v", id, err)
	}
	if _, err := v.ID([]byte("zz")); !errors.Is(err, ErrNotInVocab) || strings.Contains(err.Error(), "zz") {
		t.Errorf("a missing name: %v (want ErrNotInVocab, without the name)", err)
	}
	xs := []int64{5, -1, math.MinInt64, math.MaxInt64, 0, 1 << 40}
	var keys [][]byte
	for _, x := range xs {
		keys = append(keys, IntNameKey(nil, x))
	}
	iv, err := SortedVocab(ValuesIntegers, keys)
	if err != nil {
		t.Fatal(err)
	}
	var ints []int64
	for id := range iv.Len() {
		ints = append(ints, iv.Int64(uint32(id)))
	}
	if want := []int64{math.MinInt64, -1, 0, 5, 1 << 40, math.MaxInt64}; !slices.Equal(ints, want) {
		t.Errorf("integer names in id order %v, want %v", ints, want)
	}
	if _, err := NewVocab(ValuesStrings, [][]byte{[]byte("a"), []byte("a")}); err == nil {
		t.Error("a name twice: no error")
	}
}

// TestGrowingVocab: a growing vocabulary numbers names by first lookup
// and keeps every one findable through its rehashes.
func TestGrowingVocab(t *testing.T) {
	v := NewGrowingVocab(ValuesStrings)
	for i := range 5000 {
		id, err := v.ID([]byte(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune(i))))
		if err != nil || int(id) != v.Len()-1 && id >= uint32(v.Len()) {
			t.Fatalf("ID %d: %d, %v", i, id, err)
		}
	}
	for id := range v.Len() {
		if got, ok := v.Lookup(v.Key(uint32(id))); !ok || got != uint32(id) {
			t.Fatalf("Lookup of name %d: %d, %v", id, got, ok)
		}
	}
}

// TestVocabFile: a vocabulary reads back as it was written, with its
// fingerprint; a damaged file is refused.
func TestVocabFile(t *testing.T) {
	v, _ := SortedVocab(ValuesStrings, [][]byte{[]byte("/sports/football"), []byte("é"), []byte("")})
	var b bytes.Buffer
	if _, err := v.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadVocab(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != v.Len() || got.Values() != ValuesStrings || got.Fingerprint() != v.Fingerprint() {
		t.Errorf("read back %d names of %v", got.Len(), got.Values())
	}
	if id, err := got.ID([]byte("é")); err != nil || id != 2 {
		t.Errorf("ID(é) after reading: %d, %v", id, err)
	}
	w, _ := SortedVocab(ValuesStrings, [][]byte{[]byte("a")})
	if w.Fingerprint() == v.Fingerprint() {
		t.Error("two vocabularies, one fingerprint")
	}
	for name, data := range map[string][]byte{
		"empty":    nil,
		"magic":    append([]byte("nonsense"), b.Bytes()[8:]...),
		"truncate": b.Bytes()[:b.Len()-3],
		"trailing": append(slices.Clone(b.Bytes()), 0),
	} {
		if _, err := ReadVocab(bytes.NewReader(data)); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}

// namedMatrix is rows of string names and the vocabulary they are read
// through.
func namedMatrix(t *testing.T, rows map[string][]string) (*Matrix, *Vocab) {
	t.Helper()
	var keys [][]byte
	for _, r := range rows {
		for _, n := range r {
			keys = append(keys, []byte(n))
		}
	}
	v, err := SortedVocab(ValuesStrings, keys)
	if err != nil {
		t.Fatal(err)
	}
	m := New(0, 0)
	users := make([]string, 0, len(rows))
	for u := range rows {
		users = append(users, u)
	}
	slices.Sort(users)
	for _, u := range users {
		var ids []uint32
		for _, n := range rows[u] {
			id, _ := v.ID([]byte(n))
			ids = append(ids, id)
		}
		slices.Sort(ids)
		m.Append(u, ids)
	}
	return m, v
}

// TestWriteReadNames: string names written in list and long form read
// back as the same names (ids their ranks), the files marked as named.
func TestWriteReadNames(t *testing.T) {
	m, v := namedMatrix(t, map[string][]string{"u1": {"/news", "/sports/football"}, "u2": {"/sports/football"}, "u3": {}})
	for _, shape := range []Shape{ShapeList, ShapeLong} {
		path := filepath.Join(t.TempDir(), "named.parquet")
		if err := WriteMatrix(path, m, WriterOptions{Shape: shape, Vocab: v}); err != nil {
			t.Fatal(err)
		}
		got, st, err := ReadMatrix(path, ReadOptions{})
		if err != nil {
			t.Fatalf("%v: %v", shape, err)
		}
		if st.Layout.Values != ValuesStrings || st.Vocab == nil || st.Vocab.Fingerprint() != v.Fingerprint() {
			t.Errorf("%v: read as %v", shape, st.Layout)
		}
		want := m
		if shape == ShapeLong { // u3 has no features, so no row
			want = New(0, 0)
			want.Append("u1", m.Row(0))
			want.Append("u2", m.Row(1))
		}
		if !got.Equal(want) {
			t.Errorf("%v: read %+v, want %+v", shape, got, want)
		}
		f, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if mark, _ := f.Metadata(MetaFeatureValues); mark != "names" {
			t.Errorf("%v: mark %q", shape, mark)
		}
		f.Close()
	}
}

// TestIntegerNames: INT64 features of any magnitude are names with
// --feature_values names, written back as the same INT64s; as ids they
// are refused when out of range.
func TestIntegerNames(t *testing.T) {
	type row struct {
		UserID  string `parquet:"user_id"`
		Feature int64  `parquet:"feature"`
	}
	path := filepath.Join(t.TempDir(), "ints.parquet")
	rows := []row{{"u1", math.MinInt64}, {"u2", 1 << 50}, {"u1", -7}, {"u2", -7}, {"u1", 1 << 50}}
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadMatrix(path, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("as ids: %v, want out of range", err)
	}
	m, st, err := ReadMatrix(path, ReadOptions{Layout: Layout{Values: ValuesNames}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Layout.Values != ValuesIntegers || st.Vocab.Len() != 3 {
		t.Fatalf("read as %v with %d names", st.Layout, st.Vocab.Len())
	}
	var u1 []int64
	for _, id := range m.Row(0) {
		u1 = append(u1, st.Vocab.Int64(id))
	}
	if !slices.Equal(u1, []int64{math.MinInt64, -7, 1 << 50}) {
		t.Errorf("u1's names %v", u1)
	}
	out := filepath.Join(t.TempDir(), "out.parquet")
	if err := WriteMatrix(out, m, WriterOptions{Shape: ShapeLong, Vocab: st.Vocab}); err != nil {
		t.Fatal(err)
	}
	back, err := parquet.ReadFile[row](out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 5 || back[0] != (row{"u1", math.MinInt64}) || back[4] != (row{"u2", 1 << 50}) {
		t.Errorf("written back %v", back)
	}
	// A release of integer names reads as names without being told.
	again, st2, err := ReadMatrix(out, ReadOptions{})
	if err != nil || st2.Layout.Values != ValuesIntegers || !again.Equal(m) {
		t.Errorf("release read back: %v, %v", st2.Layout, err)
	}
}

// TestBadNames: a null name, a string that is not UTF-8, a string column
// read as ids, and a binary column of another kind are each one error
// naming file, row and column, without the value.
func TestBadNames(t *testing.T) {
	type nullable struct {
		UserID  string  `parquet:"user_id"`
		Feature *string `parquet:"feature,optional"`
	}
	type binary struct {
		UserID  string `parquet:"user_id"`
		Feature []byte `parquet:"feature"`
	}
	type jsonCol struct {
		UserID  string `parquet:"user_id"`
		Feature string `parquet:"feature,json"`
	}
	dir := t.TempDir()
	s := "/ok"
	write := func(name string, rows func(path string) error) string {
		p := filepath.Join(dir, name+".parquet")
		if err := rows(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		path   string
		values Values
		want   string
	}{
		{write("null", func(p string) error { return parquet.WriteFile(p, []nullable{{"u1", &s}, {"u2", nil}}) }), ValuesAuto, "row 1: column feature: null feature"},
		{write("utf8", func(p string) error {
			return parquet.WriteFile(p, []binary{{"u1", []byte("ok")}, {"u2", []byte{0xff, 0xfe}}})
		}), ValuesAuto, "row 1: column feature: feature not valid UTF-8"},
		{write("ids", func(p string) error { return parquet.WriteFile(p, []binary{{"u1", []byte("ok")}}) }), ValuesIDs, "column feature: wrong feature type BYTE_ARRAY: feature ids are integers"},
		{write("json", func(p string) error { return parquet.WriteFile(p, []jsonCol{{"u1", `{}`}}) }), ValuesAuto, "column feature: wrong feature type BYTE_ARRAY (JSON)"},
	}
	for _, c := range cases {
		_, _, err := ReadMatrix(c.path, ReadOptions{Layout: Layout{Values: c.values}})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), c.path) {
			t.Errorf("%s: %v, want %q", filepath.Base(c.path), err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\xff") {
			t.Errorf("%s: the value is in the message", c.path)
		}
	}
}
