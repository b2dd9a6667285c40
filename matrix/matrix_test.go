package matrix

import (
	"errors"
	"slices"
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
	if !errors.As(err, &dup) || dup.User != "a" || dup.First != 1 || dup.Then != 4 {
		t.Fatalf("repeated user: %v", err)
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
