package mondrian

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// TestPartition: features are returned by id, not by dense index, and a
// bad k is refused with its value. (The cuts themselves are compared with
// a from-scratch reference in the baseline package's tests.)
func TestPartition(t *testing.T) {
	m := matrix.New(4, 0)
	m.Append("a", []uint32{7, 900})
	m.Append("b", []uint32{7, 900, 5000})
	m.Append("c", []uint32{42})
	m.Append("d", []uint32{42, 5000})
	part, common, cols, err := Partition(context.Background(), m, 2)
	if err != nil {
		t.Fatal(err)
	}
	if cols != 4 {
		t.Errorf("%d columns, want 4", cols)
	}
	if part[0] != part[1] || part[2] != part[3] || part[0] == part[2] {
		t.Fatalf("partitions %v, want {a b} {c d}", part)
	}
	if !slices.Equal(common[part[0]], []uint32{7, 900}) || !slices.Equal(common[part[2]], []uint32{42}) {
		t.Errorf("common features %v", common)
	}
	for _, k := range []int{0, 5} {
		if _, _, _, err := Partition(context.Background(), m, k); err == nil || !strings.Contains(err.Error(), "k = ") {
			t.Errorf("k = %d: %v", k, err)
		}
	}
}
