package knn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// refOthers is the obvious reference of NearestOthers for row i: the
// lowest rows of the other groups of identical rows, by (distance to row
// i, lowest row), the first k.
func refOthers(m *matrix.Matrix, i, k int) []int32 {
	type nd struct{ d, j int32 }
	var all []nd
	seen := map[string]bool{fmt.Sprint(m.Row(i)): true}
	for j := 0; j < m.NumRows(); j++ {
		key := fmt.Sprint(m.Row(j))
		if seen[key] {
			continue
		}
		seen[key] = true
		all = append(all, nd{hamming(m.Row(i), m.Row(j)), int32(j)})
	}
	slices.SortFunc(all, func(a, b nd) int {
		if a.d != b.d {
			return int(a.d - b.d)
		}
		return int(a.j - b.j)
	})
	out := []int32{}
	for _, x := range all[:min(k, len(all))] {
		out = append(out, x.j)
	}
	return out
}

func constant(k int) func(int) int { return func(int) int { return k } }

func TestNearestOthersMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range randCases {
		for rep := 0; rep < 2; rep++ {
			m := randMatrix(r, c.n, c.cols, c.deg, c.dup, c.skew)
			ix, err := NewIndex(m, 2)
			if err != nil {
				t.Fatal(err)
			}
			// A group of identical rows asks for 4 − size others (none
			// from 4 rows on, below 0 from 5), as the solver asks for
			// fewer the more identical rows a point has.
			fewer := func(size int) int { return 4 - size }
			for ki, k := range []func(int) int{constant(0), constant(1), constant(4), constant(c.n + 5), fewer} {
				for _, s := range []Strategy{Bitset, Prefix} {
					for _, w := range []int{1, 2} {
						name := fmt.Sprintf("%s/rep%d/k#%d/%v/w%d", c.name, rep, ki, s, w)
						got, st, err := ix.NearestOthers(k, Options{Workers: w, Strategy: s})
						if err != nil {
							t.Fatal(err)
						}
						if st.Strategy != s.String() || !got.Exact {
							t.Fatalf("%s: strategy %q, exact %v", name, st.Strategy, got.Exact)
						}
						for i := 0; i < m.NumRows(); i++ {
							want := refOthers(m, i, max(k(groupSize(m, i)), 0))
							if !slices.Equal(got.Of(i), want) {
								t.Fatalf("%s: row %d: got %v, want %v", name, i, got.Of(i), want)
							}
						}
					}
				}
			}
		}
	}
}

// A bounded search may miss nearer groups but lists only real other
// groups, each by its lowest row, k of them when there are.
func TestNearestOthersBounded(t *testing.T) {
	m := userLists(3000, 7)
	ix, err := NewIndex(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := ix.NearestOthers(constant(4), Options{MaxScan: 64})
	if err != nil {
		t.Fatal(err)
	}
	if st.Cut == 0 || got.Exact {
		t.Fatalf("MaxScan 64 cut %d queries (exact %v); the test needs some cut", st.Cut, got.Exact)
	}
	exact, _, err := ix.NearestOthers(constant(4), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < m.NumRows(); i++ {
		list := got.Of(i)
		if len(list) != len(exact.Of(i)) {
			t.Fatalf("row %d: %d groups, exact search %d", i, len(list), len(exact.Of(i)))
		}
		for _, j := range list {
			if hamming(m.Row(i), m.Row(int(j))) == 0 {
				t.Fatalf("row %d: list %v holds its own group's row %d", i, list, j)
			}
			if firstEqual(m, int(j)) != int(j) {
				t.Fatalf("row %d: row %d is not the lowest of its group", i, j)
			}
		}
	}
}

// groupSize is the number of rows equal to row i.
func groupSize(m *matrix.Matrix, i int) int {
	n := 0
	for j := 0; j < m.NumRows(); j++ {
		if slices.Equal(m.Row(i), m.Row(j)) {
			n++
		}
	}
	return n
}

// firstEqual is the lowest row equal to row j.
func firstEqual(m *matrix.Matrix, j int) int {
	for i := 0; i < j; i++ {
		if slices.Equal(m.Row(i), m.Row(j)) {
			return i
		}
	}
	return j
}

func TestNearestOthersChecksParams(t *testing.T) {
	ix, err := NewIndex(randMatrix(rand.New(rand.NewPCG(1, 1)), 10, 5, 3, 0, false), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{Workers: -1}, {MaxScan: -3}, {Strategy: Prefix + 1}} {
		if _, _, err := ix.NearestOthers(constant(2), opts); err == nil {
			t.Errorf("%+v: no error", opts)
		}
	}
}
