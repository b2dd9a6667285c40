package knn

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// refExactKey is the candidate's exact key and whether (dist, id) can
// enter under the worst kept key (D, L): dist < D, or dist == D and id <=
// L (topK.push refuses a key equal to the bound itself).
func refExactKey(f []int32, mark []uint8, st uint8, a, D int, L int64, id int32) (key uint64, enters bool) {
	c := 0
	for _, r := range f {
		if mark[r] == st {
			c++
		}
	}
	dist := a + len(f) - 2*c
	return uint64(dist)<<32 | uint64(uint32(id)), dist < D || dist == D && int64(id) <= L
}

// checkExactKey holds exactKey to its contract: the exact key whenever the
// candidate can enter, false only when it cannot.
func checkExactKey(t *testing.T, name string, f []int32, mark []uint8, st uint8, a, D int, L int64, id int32) (uint64, bool) {
	t.Helper()
	key, ok := exactKey(f, mark, st, a, D, L, id)
	rk, enters := refExactKey(f, mark, st, a, D, L, id)
	switch {
	case enters && !ok:
		t.Errorf("%s: exactKey refused a candidate that enters (key %d<<32|%d)", name, rk>>32, uint32(rk))
	case ok && key != rk:
		t.Errorf("%s: exactKey = %d<<32|%d, want %d<<32|%d", name, key>>32, uint32(key), rk>>32, uint32(rk))
	}
	return key, ok
}

func TestExactKey(t *testing.T) {
	// The query holds features 0, 1, 2, 3 (a = 4), marked with stamp 7;
	// feature 4 carries an older stamp, 5 none.
	mark := []uint8{7, 7, 7, 7, 6, 0}
	const st, a = 7, 4
	for _, c := range []struct {
		name string
		f    []int32
		D    int
		L    int64
		id   int32
		key  uint64
		ok   bool
	}{
		{"no bound yet", []int32{4, 5}, inf, 1 << 62, 9, 6<<32 | 9, true},
		{"identical", []int32{0, 1, 2, 3}, 1, 0, 3, 0<<32 | 3, true},
		{"below the bound", []int32{0, 1, 4}, 4, 0, 5, 3<<32 | 5, true},
		{"tie, lower id", []int32{0, 1, 4}, 3, 8, 5, 3<<32 | 5, true},
		{"tie, same id", []int32{0, 1, 4}, 3, 5, 5, 3<<32 | 5, true},
		{"tie, higher id", []int32{0, 1, 4}, 3, 4, 5, 0, false},
		{"above the bound", []int32{0, 4, 5}, 4, 1 << 62, 5, 0, false},
		{"fails on its first feature", []int32{4, 0, 1, 2}, 1, 1 << 62, 1, 0, false},
		{"fails on its last feature", []int32{0, 1, 2, 5}, 1, 1 << 62, 1, 0, false},
		{"empty candidate", nil, 5, 1 << 62, 2, 4<<32 | 2, true},
		// Only a missing feature stops the count: a candidate holding
		// nothing, or only shared features, gets its key, and push refuses it.
		{"empty candidate at the bound", nil, 4, 1, 2, 4<<32 | 2, true},
		{"all shared, still too far", []int32{0}, 2, 1 << 62, 2, 3<<32 | 2, true},
		{"high id keeps its bits", []int32{0}, inf, 1 << 62, 1<<31 - 1, 3<<32 | (1<<31 - 1), true},
	} {
		key, ok := checkExactKey(t, c.name, c.f, mark, st, a, c.D, c.L, c.id)
		if key != c.key || ok != c.ok {
			t.Errorf("%s: exactKey = (%d<<32|%d, %v), want (%d<<32|%d, %v)", c.name, key>>32, uint32(key), ok, c.key>>32, uint32(c.key), c.ok)
		}
	}
}

// TestExactKeyMatchesReference draws queries, candidates and bounds.
func TestExactKeyMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const ncols = 40
	mark := make([]uint8, ncols)
	for n := 0; n < 20000; n++ {
		st := uint8(1 + r.IntN(255))
		a := 0
		for i := range mark {
			switch r.IntN(3) {
			case 0:
				mark[i], a = st, a+1
			case 1:
				mark[i] = st - 1
			default:
				mark[i] = 0
			}
		}
		f := make([]int32, 0, ncols)
		for _, i := range r.Perm(ncols)[:r.IntN(ncols)] {
			f = append(f, int32(i))
		}
		D := r.IntN(2*ncols + 2)
		if r.IntN(10) == 0 {
			D = inf
		}
		L := int64(r.IntN(20))
		id := int32(r.IntN(20))
		checkExactKey(t, fmt.Sprintf("query degree %d, candidate %v, bound (%d, %d), id %d", a, f, D, L, id), f, mark, st, a, D, L, id)
		if t.Failed() {
			return
		}
	}
}
