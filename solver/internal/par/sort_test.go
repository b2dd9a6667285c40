package par

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortFuncMatchesSlices(t *testing.T) {
	type kv struct{ k, i int32 } // i makes the order total
	r := rand.New(rand.NewPCG(1, 2))
	byKey := func(a, b kv) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	}
	for _, n := range []int{0, 1, 5, 2*minSortPart - 1, 2 * minSortPart, 3*minSortPart + 7, 200_000} {
		for _, keys := range []int32{3, 1 << 30} { // many ties on k, few
			s := make([]kv, n)
			for i := range s {
				s[i] = kv{r.Int32N(keys), int32(i)}
			}
			r.Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
			want := slices.Clone(s)
			slices.SortFunc(want, byKey)
			for _, w := range []int{0, 1, 2, 3, 4, 8} {
				got := slices.Clone(s)
				SortFunc(w, got, byKey)
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d keys=%d workers=%d: order differs from slices.SortFunc", n, keys, w)
				}
			}
			// A partial order (ties on k) sorts by k and keeps every
			// element.
			got := slices.Clone(s)
			SortFunc(4, got, func(a, b kv) int { return cmp.Compare(a.k, b.k) })
			if !slices.IsSortedFunc(got, func(a, b kv) int { return cmp.Compare(a.k, b.k) }) {
				t.Fatalf("n=%d keys=%d: not sorted by k", n, keys)
			}
			slices.SortFunc(got, byKey)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d keys=%d: elements lost or repeated", n, keys)
			}
		}
	}
}

func BenchmarkSortFunc(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	s := make([]uint64, 1_000_000)
	for i := range s {
		s[i] = r.Uint64()
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			buf := make([]uint64, len(s))
			for b.Loop() {
				copy(buf, s)
				SortFunc(w, buf, cmp.Compare[uint64])
			}
		})
	}
}
