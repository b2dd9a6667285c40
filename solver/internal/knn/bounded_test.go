package knn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// checkBoundedGraph checks a bounded KNearest graph against the exact one:
// every list is a valid list (K distinct other rows, true distances,
// ascending by (distance, row)) whose i-th distance is at least the exact
// i-th distance. It returns how many lists differ from the exact ones.
func checkBoundedGraph(t *testing.T, name string, m *matrix.Matrix, got, want *Graph) int {
	t.Helper()
	if got.K != want.K {
		t.Fatalf("%s: K = %d, want %d", name, got.K, want.K)
	}
	differ := 0
	for i := 0; i < m.NumRows() && got.K > 0; i++ {
		gi, gd := got.Row(i)
		wi, wd := want.Row(i)
		for j, v := range gi {
			if v == int32(i) || v < 0 || int(v) >= m.NumRows() || slices.Contains(gi[:j], v) {
				t.Fatalf("%s: row %d lists %v", name, i, gi)
			}
			if d := hamming(m.Row(i), m.Row(int(v))); d != gd[j] {
				t.Fatalf("%s: row %d: neighbour %d at distance %d, listed %d", name, i, v, d, gd[j])
			}
			if j > 0 && (gd[j] < gd[j-1] || gd[j] == gd[j-1] && v < gi[j-1]) {
				t.Fatalf("%s: row %d: list not sorted: %v %v", name, i, gi, gd)
			}
			if gd[j] < wd[j] {
				t.Fatalf("%s: row %d: %d-th distance %d below the exact %d", name, i, j, gd[j], wd[j])
			}
		}
		if !slices.Equal(gi, wi) {
			differ++
		}
	}
	return differ
}

// TestKNearestBounded: a bounded search returns valid lists, no better
// than the exact ones; it reports cut queries and an inexact graph when it
// stops queries, and equals the exact search when the bound is never hit.
func TestKNearestBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cutSome := false
	for _, c := range randCases {
		m := randMatrix(r, c.n, c.cols, c.deg, c.dup, c.skew)
		for _, k := range []int{1, 4, 16} {
			want := refKNearest(m, k)
			for _, w := range []int{1, 2} {
				name := fmt.Sprintf("%s/k%d/w%d", c.name, k, w)
				got, st, err := KNearest(m, k, Options{Workers: w, Strategy: Prefix, MaxScan: 3})
				if err != nil {
					t.Fatal(err)
				}
				differ := checkBoundedGraph(t, name, m, got, want)
				// What a bounded query finds depends on its hints; they
				// must not depend on the number of workers.
				if w == 2 {
					for _, w2 := range []int{1, 3} {
						again, _, err := KNearest(m, k, Options{Workers: w2, Strategy: Prefix, MaxScan: 3})
						if err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(again.Idx, got.Idx) || !slices.Equal(again.Dist, got.Dist) {
							t.Fatalf("%s: bounded graph with %d workers differs from 2 workers", name, w2)
						}
					}
				}
				if got.Exact != (st.Cut == 0) {
					t.Fatalf("%s: Exact = %v with %d queries cut", name, got.Exact, st.Cut)
				}
				if got.Exact && differ > 0 {
					t.Fatalf("%s: graph claims to be exact but %d lists differ", name, differ)
				}
				cutSome = cutSome || differ > 0
				// A bound no query reaches changes nothing.
				full, st, err := KNearest(m, k, Options{Workers: w, Strategy: Prefix, MaxScan: 1 << 30})
				if err != nil {
					t.Fatal(err)
				}
				if st.Cut != 0 {
					t.Fatalf("%s: %d queries cut by a bound of 2^30", name, st.Cut)
				}
				compareGraphs(t, name+"/unreached", full, want)
			}
		}
	}
	if !cutSome {
		t.Fatal("a bound of 3 entries never changed a list: the test checks nothing")
	}
}

// TestFacilitiesBounded: bounded Nearest returns an open facility at its
// true distance, never nearer than the exact answer and never farther than
// the best open neighbour listed in the graph; exact facilities given an
// inexact graph still answer exactly (the list shortcut needs an exact
// graph).
func TestFacilitiesBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	cutSome, inexact := false, false
	for _, c := range randCases {
		if c.n == 0 {
			continue
		}
		m := randMatrix(r, c.n, c.cols, c.deg, c.dup, c.skew)
		g, _, err := KNearest(m, 4, Options{Strategy: Prefix, MaxScan: 2})
		if err != nil {
			t.Fatal(err)
		}
		inexact = inexact || !g.Exact
		for _, bounded := range []bool{false, true} {
			opts := Options{Strategy: Prefix}
			if bounded {
				opts.MaxScan = 2
			}
			f := NewFacilities(m, opts)
			if err := f.UseNeighbours(g); err != nil {
				t.Fatal(err)
			}
			f = f.Empty()
			open := map[int32]bool{}
			for step := 0; step < 6*c.n; step++ {
				row := int32(r.IntN(c.n))
				if r.IntN(10) < 3 {
					f.Add(row)
					open[row] = true
					continue
				}
				fac, dist, ok := f.Nearest(row)
				wf, wd := int32(-1), int32(0)
				for o := range open {
					if d := hamming(m.Row(int(row)), m.Row(int(o))); wf < 0 || d < wd || d == wd && o < wf {
						wf, wd = o, d
					}
				}
				name := fmt.Sprintf("%s/bounded=%v/step %d: Nearest(%d) = %d,%d,%v", c.name, bounded, step, row, fac, dist, ok)
				if ok != (wf >= 0) {
					t.Fatalf("%s, want ok %v", name, wf >= 0)
				}
				if !ok {
					continue
				}
				if !bounded {
					if fac != wf || dist != wd {
						t.Fatalf("%s, want %d,%d", name, wf, wd)
					}
					continue
				}
				if !open[fac] || hamming(m.Row(int(row)), m.Row(int(fac))) != dist || dist < wd {
					t.Fatalf("%s: not an open facility at its distance, or nearer than the nearest (%d)", name, wd)
				}
				idx, nd := g.Row(int(row))
				for j, v := range idx {
					if open[v] && nd[j] < dist {
						t.Fatalf("%s: open neighbour %d at distance %d is nearer", name, v, nd[j])
					}
				}
				cutSome = cutSome || dist != wd
			}
		}
	}
	if !inexact || !cutSome {
		t.Fatalf("inexact graph seen %v, bounded answer differed %v: the test checks nothing", inexact, cutSome)
	}
}
