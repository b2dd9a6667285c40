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
