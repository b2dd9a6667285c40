package knn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// randMatrix draws n rows over cols columns: each row picks a degree in
// [0, maxDeg] and that many distinct columns, a fraction dup of rows copy
// an earlier row. skew > 0 makes low columns more frequent.
func randMatrix(r *rand.Rand, n, cols, maxDeg int, dup float64, skew bool) *matrix.Matrix {
	m := matrix.New(n, n*maxDeg)
	for i := 0; i < n; i++ {
		user := fmt.Sprintf("u%d", i)
		if i > 0 && r.Float64() < dup {
			m.Append(user, slices.Clone(m.Row(r.IntN(i))))
			continue
		}
		d := r.IntN(maxDeg + 1)
		var feats []uint32
		for j := 0; j < d; j++ {
			c := r.IntN(cols)
			if skew {
				c = min(r.IntN(cols), r.IntN(cols), r.IntN(cols))
			}
			feats = append(feats, uint32(c)*7+3) // sparse, non-contiguous ids
		}
		m.Append(user, feats)
	}
	return m
}

func hamming(a, b []uint32) int32 {
	i, j, c := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			c++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return int32(len(a) + len(b) - 2*c)
}

// refKNearest is the obvious O(n²) reference.
func refKNearest(m *matrix.Matrix, k int) *Graph {
	n := m.NumRows()
	K := min(k, max(n-1, 0))
	g := &Graph{K: K, Idx: make([]int32, n*K), Dist: make([]int32, n*K), Exact: true}
	type nd struct{ d, j int32 }
	for i := 0; i < n; i++ {
		var all []nd
		for j := 0; j < n; j++ {
			if j != i {
				all = append(all, nd{hamming(m.Row(i), m.Row(j)), int32(j)})
			}
		}
		slices.SortFunc(all, func(a, b nd) int {
			if a.d != b.d {
				return int(a.d - b.d)
			}
			return int(a.j - b.j)
		})
		for t := 0; t < K; t++ {
			g.Idx[i*K+t], g.Dist[i*K+t] = all[t].j, all[t].d
		}
	}
	return g
}

func compareGraphs(t *testing.T, name string, got, want *Graph) {
	t.Helper()
	if got.K != want.K || got.Exact != want.Exact {
		t.Fatalf("%s: K = %d, exact %v, want %d, %v", name, got.K, got.Exact, want.K, want.Exact)
	}
	n := len(want.Idx) / max(want.K, 1)
	if want.K == 0 {
		n = 0
	}
	for i := 0; i < n; i++ {
		gi, gd := got.Row(i)
		wi, wd := want.Row(i)
		if !slices.Equal(gi, wi) || !slices.Equal(gd, wd) {
			t.Fatalf("%s: row %d:\n got idx %v dist %v\nwant idx %v dist %v", name, i, gi, gd, wi, wd)
		}
	}
}

type randCase struct {
	name         string
	n, cols, deg int
	dup          float64
	skew         bool
}

var randCases = []randCase{
	{"dense", 120, 12, 8, 0, false},
	{"dense-dups", 150, 10, 6, 0.4, false},
	{"sparse", 200, 400, 6, 0, false},
	{"sparse-skew", 250, 300, 12, 0.1, true},
	{"sparse-dups-empty", 180, 50, 3, 0.3, true}, // degree 0 rows are empty
	{"wide", 100, 2000, 40, 0.05, true},          // > 512 columns
	{"tiny", 5, 4, 2, 0.3, false},
	{"one", 1, 4, 2, 0, false},
	{"empty", 0, 4, 2, 0, false},
}

func TestKNearestMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range randCases {
		for rep := 0; rep < 3; rep++ {
			m := randMatrix(r, c.n, c.cols, c.deg, c.dup, c.skew)
			// One index serves every search below, beside KNearest's own.
			ix, err := NewIndex(m, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{0, 1, 3, 16, c.n + 5} {
				want := refKNearest(m, k)
				for _, s := range []Strategy{Auto, Bitset, Prefix} {
					for _, w := range []int{1, 2} {
						got, st, err := KNearest(m, k, Options{Workers: w, Strategy: s})
						if err != nil {
							t.Fatal(err)
						}
						if s != Auto && st.Strategy != s.String() {
							t.Fatalf("forced %v, stats say %q", s, st.Strategy)
						}
						name := fmt.Sprintf("%s/rep%d/k%d/%v/w%d", c.name, rep, k, s, w)
						compareGraphs(t, name, got, want)
						if got, _, err = ix.KNearest(k, Options{Workers: w, Strategy: s}); err != nil {
							t.Fatal(err)
						}
						compareGraphs(t, name+"/shared index", got, want)
					}
				}
			}
		}
	}
}

func TestAutoStrategy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dense := randMatrix(r, 300, 100, 8, 0, false)
	sparse := randMatrix(r, 300, 5000, 8, 0, false)
	if _, st, _ := KNearest(dense, 4, Options{}); st.Strategy != "bitset" {
		t.Errorf("100 columns: strategy %q, want bitset", st.Strategy)
	}
	if _, st, _ := KNearest(sparse, 4, Options{}); st.Strategy != "prefix" {
		t.Errorf("~5000 columns: strategy %q, want prefix", st.Strategy)
	}
}

func TestDuplicatesFirst(t *testing.T) {
	m := matrix.New(0, 0)
	m.Append("a", []uint32{1, 2})
	m.Append("b", []uint32{5})
	m.Append("c", []uint32{1, 2})
	m.Append("d", []uint32{1, 2})
	m.Append("e", nil)
	g, st, err := KNearest(m, 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Distinct != 3 || st.Rows != 5 {
		t.Fatalf("stats %v", st)
	}
	idx, dist := g.Row(2)
	// row c: a and d are identical (0); then e (empty) at 2 beats b at 3
	if !slices.Equal(idx, []int32{0, 3, 4}) || !slices.Equal(dist, []int32{0, 0, 2}) {
		t.Fatalf("row 2: idx %v dist %v", idx, dist)
	}
	idx, dist = g.Row(4) // empty row: b at 1, then a, c at 2
	if !slices.Equal(idx, []int32{1, 0, 2}) || !slices.Equal(dist, []int32{1, 2, 2}) {
		t.Fatalf("row 4: idx %v dist %v", idx, dist)
	}
}

func TestCheckParams(t *testing.T) {
	ok := matrix.New(0, 0)
	ok.Append("a", []uint32{1})
	bad := &matrix.Matrix{Users: []string{"a"}, Offsets: []int64{0}}
	cases := []struct {
		name string
		m    *matrix.Matrix
		k    int
		opts Options
		want string // substring of the error, "" for none
	}{
		{"ok", ok, 3, Options{}, ""},
		{"k zero", ok, 0, Options{Workers: 2, Strategy: Prefix}, ""},
		{"nil", nil, 3, Options{}, "nil matrix"},
		{"offsets", bad, 3, Options{}, "1 offsets for 1 rows"},
		{"negative k", ok, -1, Options{}, "k = -1"},
		{"workers", ok, 1, Options{Workers: -2}, "Workers = -2"},
		{"strategy", ok, 1, Options{Strategy: 7}, "unknown strategy 7"},
	}
	for _, c := range cases {
		err := checkParams(c.m, c.k, c.opts)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	if _, _, err := KNearest(nil, 1, Options{}); err == nil {
		t.Error("KNearest(nil) did not fail")
	}
	for _, c := range []struct {
		name    string
		m       *matrix.Matrix
		workers int
		want    string
	}{
		{"nil", nil, 0, "nil matrix"},
		{"offsets", bad, 0, "1 offsets for 1 rows"},
		{"workers", ok, -1, "workers = -1"},
	} {
		if _, err := NewIndex(c.m, c.workers); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewIndex %s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	ix, err := NewIndex(ok, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.KNearest(-1, Options{}); err == nil || !strings.Contains(err.Error(), "k = -1") {
		t.Errorf("Index.KNearest(-1): error %v", err)
	}
	if _, err := ix.Facilities(Options{MaxScan: -1}); err == nil || !strings.Contains(err.Error(), "MaxScan = -1") {
		t.Errorf("Index.Facilities(MaxScan -1): error %v", err)
	}
}

func TestFacilitiesMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range randCases {
		if c.n == 0 {
			continue
		}
		m := randMatrix(r, c.n, c.cols, c.deg, c.dup, c.skew)
		for _, s := range []Strategy{Bitset, Prefix} {
			base := NewFacilities(m, Options{Strategy: s})
			for rep := 0; rep < 7; rep++ {
				f := base
				// rank breaks ties (the row itself unless EmptyRanked).
				rank := make([]int32, c.n)
				for i := range rank {
					rank[i] = int32(i)
				}
				switch rep {
				case 1:
					f = base.Empty()
				case 2, 3, 5:
					f = NewFacilities(m, Options{Strategy: s})
					g, _, err := KNearest(m, 1+3*(rep%2), Options{})
					if err != nil {
						t.Fatal(err)
					}
					if err := f.UseNeighbours(g); err != nil {
						t.Fatal(err)
					}
					f = f.Empty()
				case 6: // the graph and the set from one index
					ix, err := NewIndex(m, 2)
					if err != nil {
						t.Fatal(err)
					}
					g, _, err := ix.KNearest(3, Options{})
					if err != nil {
						t.Fatal(err)
					}
					if f, err = ix.Facilities(Options{Strategy: s}); err != nil {
						t.Fatal(err)
					}
					if err := f.UseNeighbours(g); err != nil {
						t.Fatal(err)
					}
				}
				if rep >= 4 {
					r.Shuffle(len(rank), func(i, j int) { rank[i], rank[j] = rank[j], rank[i] })
					var err error
					if f, err = f.EmptyRanked(rank); err != nil {
						t.Fatal(err)
					}
				}
				open := map[int32]bool{}
				for step := 0; step < 6*c.n; step++ {
					row := int32(r.IntN(c.n))
					switch op := r.IntN(10); {
					case op < 3:
						f.Add(row)
						open[row] = true
					case op < 4:
						f.Remove(row)
						delete(open, row)
					default:
						fac, dist, ok := f.Nearest(row)
						wf, wd, wok := int32(-1), int32(0), false
						for o := range open {
							d := hamming(m.Row(int(row)), m.Row(int(o)))
							if !wok || d < wd || d == wd && rank[o] < rank[wf] {
								wf, wd, wok = o, d, true
							}
						}
						if ok != wok || fac != wf || dist != wd {
							t.Fatalf("%s/%v/rep %d/step %d: Nearest(%d) = %d,%d,%v want %d,%d,%v", c.name, s, rep, step, row, fac, dist, ok, wf, wd, wok)
						}
					}
					if f.Len() != len(open) {
						t.Fatalf("%s/%v: Len %d, want %d", c.name, s, f.Len(), len(open))
					}
				}
				// Close everything again.
				for o := range open {
					f.Remove(o)
				}
				if f.Len() != 0 {
					t.Fatalf("Len after closing all = %d", f.Len())
				}
				if _, _, ok := f.Nearest(0); ok {
					t.Fatal("Nearest on empty set reported ok")
				}
			}
		}
	}
}

func TestEmptyRankedChecksRanks(t *testing.T) {
	m := randMatrix(rand.New(rand.NewPCG(7, 9)), 4, 5, 3, 0, false)
	f := NewFacilities(m, Options{})
	for _, bad := range [][]int32{nil, {0, 1, 2}, {0, 1, 2, 2}, {0, 1, 2, 4}, {-1, 0, 1, 2}} {
		if _, err := f.EmptyRanked(bad); err == nil {
			t.Errorf("EmptyRanked(%v) did not fail", bad)
		}
	}
	if _, err := f.EmptyRanked([]int32{3, 1, 0, 2}); err != nil {
		t.Errorf("EmptyRanked(permutation) = %v", err)
	}
}

func TestUseNeighboursChecksGraph(t *testing.T) {
	m := randMatrix(rand.New(rand.NewPCG(7, 8)), 10, 5, 3, 0, false)
	f := NewFacilities(m, Options{})
	g, _, _ := KNearest(m, 3, Options{})
	if err := f.UseNeighbours(g); err != nil {
		t.Fatal(err)
	}
	short := &Graph{K: 3, Idx: g.Idx[:9], Dist: g.Dist[:9]}
	for _, bad := range []*Graph{nil, short} {
		if err := f.UseNeighbours(bad); err == nil || !strings.Contains(err.Error(), "10 facility rows") {
			t.Errorf("UseNeighbours(%v) error = %v", bad, err)
		}
	}
}

func TestAllRowsEmpty(t *testing.T) {
	m := matrix.New(0, 0)
	for i := 0; i < 6; i++ {
		m.Append(fmt.Sprint(i), nil)
	}
	for _, s := range []Strategy{Bitset, Prefix} {
		got, st, err := KNearest(m, 3, Options{Strategy: s})
		if err != nil {
			t.Fatal(err)
		}
		if st.Distinct != 1 || st.Columns != 0 {
			t.Errorf("%v: stats %v", s, st)
		}
		compareGraphs(t, "empty rows "+s.String(), got, refKNearest(m, 3))
		f := NewFacilities(m, Options{Strategy: s})
		f.Add(4)
		f.Add(2)
		if fac, d, ok := f.Nearest(5); fac != 2 || d != 0 || !ok {
			t.Errorf("%v: Nearest(5) = %d,%d,%v want 2,0,true", s, fac, d, ok)
		}
	}
}

// TestAheadKeepsAnswers runs the same online loop (query, then open the row
// every third step) on two empty copies, one hinting the queries ahead with
// Ahead: every answer must agree, up to the end of the order, with and
// without a neighbour graph and ranks, under both strategies.
func TestAheadKeepsAnswers(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range randCases {
		if c.n == 0 {
			continue
		}
		m := randMatrix(r, c.n, c.cols, c.deg, c.dup, c.skew)
		g, _, err := KNearest(m, 4, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []Strategy{Bitset, Prefix} {
			for _, withGraph := range []bool{false, true} {
				base := NewFacilities(m, Options{Strategy: s})
				if withGraph {
					if err := base.UseNeighbours(g); err != nil {
						t.Fatal(err)
					}
				}
				order := r.Perm(c.n)
				ord := make([]int32, len(order))
				rank := make([]int32, len(order))
				for i, u := range order {
					ord[i], rank[u] = int32(u), int32(i)
				}
				ord = append(ord, ord[:c.n/2]...) // rows queried again
				plain, _ := base.EmptyRanked(rank)
				hinted, _ := base.EmptyRanked(rank)
				for i, u := range ord {
					hinted.Ahead(ord, i)
					f1, d1, ok1 := plain.Nearest(u)
					f2, d2, ok2 := hinted.Nearest(u)
					if f1 != f2 || d1 != d2 || ok1 != ok2 {
						t.Fatalf("%s/%v/graph %v: step %d: Nearest(%d) = %d,%d,%v with Ahead, %d,%d,%v without", c.name, s, withGraph, i, u, f2, d2, ok2, f1, d1, ok1)
					}
					if i%3 == 0 {
						plain.Add(u)
						hinted.Add(u)
					}
				}
			}
		}
	}
}

// TestFacilitiesStampWrap checks that a query's marks of the candidates it
// has looked at do not outlive their stamp's cycle: the facility a is seen
// by the first query only, and the 256th query, the first after the 8-bit
// stamp wraps to the same value, must still find it.
func TestFacilitiesStampWrap(t *testing.T) {
	m := matrix.New(0, 0)
	m.Append("a", []uint32{1, 2})
	m.Append("b", []uint32{3}) // the smallest open facility: every query's seed
	m.Append("qa", []uint32{1, 2, 5})
	m.Append("qb", []uint32{3, 6})
	f := NewFacilities(m, Options{Strategy: Prefix})
	f.Add(0)
	f.Add(1)
	for q := 1; q <= 3*256; q++ {
		row, want, wd := int32(3), int32(1), int32(1) // qb: b at 1
		if q%255 == 1 {
			row, want = 2, 0 // qa: a at 1
		}
		if fac, dist, ok := f.Nearest(row); !ok || fac != want || dist != wd {
			t.Fatalf("query %d: Nearest(%d) = %d,%d,%v want %d,%d", q, row, fac, dist, ok, want, wd)
		}
	}
}
