package matrix

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestUserOrder(t *testing.T) {
	m := New(4, 0)
	for _, u := range []string{"c", "a", "d", "b"} {
		m.Append(u, nil)
	}
	order, err := UserOrder(m)
	if err != nil || !slices.Equal(order, []int32{1, 3, 0, 2}) {
		t.Fatalf("UserOrder = %v, %v; want [1 3 0 2]", order, err)
	}
	m.Append("a", []uint32{1})
	_, err = UserOrder(m)
	var dup *DuplicateUserError
	if !errors.As(err, &dup) || dup.First != 1 || dup.Then != 4 || dup.FirstFile != "" || dup.ThenFile != "" {
		t.Fatalf("repeated user: %v", err)
	}
	// Rows only, and never the id.
	if want := "row 4: user id repeats row 1 (merge repeats, e.g. --dedupe=union)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestColumns(t *testing.T) {
	m := New(3, 0)
	m.Append("a", []uint32{7, 2})
	m.Append("b", nil)
	m.Append("c", []uint32{2, 9, 0})
	if got := m.Columns(); !slices.Equal(got, []uint32{0, 2, 7, 9}) {
		t.Errorf("Columns = %v, want [0 2 7 9]", got)
	}
	if m.NumColumns() != 4 {
		t.Errorf("NumColumns = %d, want 4", m.NumColumns())
	}
	if got := New(0, 0).Columns(); len(got) != 0 {
		t.Errorf("empty matrix: Columns = %v", got)
	}
}

// TestDuplicateAcrossFiles: a repeated id names the files and rows of both
// occurrences, never the id; rows of one file name it once.
func TestDuplicateAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	if err := WriteMatrix(a, rowsMatrix("secret", 4), WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	mb := rowsMatrix("other", 3)
	mb.Append("secret0", []uint32{9})
	if err := WriteMatrix(b, mb, WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "a0.parquet") // sorts between a and b, no rows
	if err := WriteMatrix(empty, New(0, 0), WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	same := filepath.Join(dir, "same.parquet")
	ms := rowsMatrix("secret", 3)
	ms.Append("secret1", nil)
	if err := WriteMatrix(same, ms, WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		a + "," + b:               b + ": row 3: user id repeats " + a + " row 0 (merge repeats, e.g. --dedupe=union)",
		b + "," + empty + "," + a: b + ": row 3: user id repeats " + a + " row 0 (merge repeats, e.g. --dedupe=union)",
		same:                      same + ": row 3: user id repeats row 1 (merge repeats, e.g. --dedupe=union)",
	} {
		_, _, err := ReadMatrix(spec, ReadOptions{})
		var dup *DuplicateUserError
		if err == nil || err.Error() != want || !errors.As(err, &dup) {
			t.Errorf("ReadMatrix(%s) = %v, want %q", spec, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows the id: %v", err)
		}
		if _, st, err := ReadMatrix(spec, ReadOptions{Dedupe: DedupeUnion}); err != nil || st.MergedRows != 1 {
			t.Errorf("union: %d merged, %v", st.MergedRows, err)
		}
	}
	// In memory: rows only.
	m := rowsMatrix("secret", 3)
	m.Append("secret2", nil)
	if _, _, err := Dedupe(m, DedupeRefuse); err == nil || err.Error() != "row 3: user id repeats row 2 (merge repeats, e.g. --dedupe=union)" {
		t.Errorf("Dedupe: %v", err)
	}
}
