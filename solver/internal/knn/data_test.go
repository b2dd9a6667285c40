package knn

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/matrix"
)

// loadAdult is UCI adult one-hot encoded by the importer: 32,561 rows ×
// 102 columns (skips when absent; see internal/datasets).
func loadAdult(tb testing.TB) *matrix.Matrix { return datasets.ForTest(tb, "adult") }

// loadDBLP is the undirected SNAP com-DBLP graph, a row per node with its
// neighbours as features (skips when absent).
func loadDBLP(tb testing.TB) *matrix.Matrix { return datasets.ForTest(tb, "dblp") }

// userLists draws n power-law user lists: a geometric degree ≥ 1 with mean
// 10, features Zipf(1.1) over 1e5 columns.
func userLists(n int, seed uint64) *matrix.Matrix {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	z := rand.NewZipf(r, 1.1, 1, 1e5-1)
	m := matrix.New(n, 10*n)
	var feats []uint32
	for i := 0; i < n; i++ {
		d := 1
		for r.Float64() >= 0.1 {
			d++
		}
		feats = feats[:0]
		for j := 0; j < d; j++ {
			feats = append(feats, uint32(z.Uint64()))
		}
		m.Append("u"+strconv.Itoa(i), feats)
	}
	return m
}

// refRow is the reference neighbour list of row i (O(n) scan).
func refRow(m *matrix.Matrix, i, K int) (idx, dist []int32) {
	type nd struct{ d, j int32 }
	h := make([]nd, 0, m.NumRows())
	for j := 0; j < m.NumRows(); j++ {
		if j != i {
			h = append(h, nd{hamming(m.Row(i), m.Row(j)), int32(j)})
		}
	}
	slices.SortFunc(h, func(a, b nd) int {
		if a.d != b.d {
			return int(a.d - b.d)
		}
		return int(a.j - b.j)
	})
	for _, x := range h[:K] {
		idx = append(idx, x.j)
		dist = append(dist, x.d)
	}
	return idx, dist
}

// checkSample compares sampled rows of g with the reference.
func checkSample(t *testing.T, m *matrix.Matrix, g *Graph, samples int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	for s := 0; s < samples; s++ {
		i := r.IntN(m.NumRows())
		wi, wd := refRow(m, i, g.K)
		gi, gd := g.Row(i)
		if !slices.Equal(gi, wi) || !slices.Equal(gd, wd) {
			t.Fatalf("row %d:\n got %v %v\nwant %v %v", i, gi, gd, wi, wd)
		}
	}
}

func TestAdult(t *testing.T) {
	m := loadAdult(t)
	if m.NumRows() != 32561 || m.NumEntries() != 260488 || m.NumColumns() != 102 {
		t.Fatalf("adult: %d rows, %d entries, %d columns", m.NumRows(), m.NumEntries(), m.NumColumns())
	}
	g, st, err := KNearest(m, 16, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("adult: %v", st)
	if st.Strategy != "bitset" {
		t.Errorf("adult ran %q, want bitset", st.Strategy)
	}
	checkSample(t, m, g, 40, 7)
	g2, st2, err := KNearest(m, 16, Options{Strategy: Prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("adult forced: %v", st2)
	compareGraphs(t, "adult prefix vs bitset", g2, g)
}

// TestDBLP checks the exact search on dblp (317,080 rows); skipped under
// -short (make check) as a long data set.
func TestDBLP(t *testing.T) {
	if testing.Short() {
		t.Skip("dblp (317,080 rows) skipped in -short mode")
	}
	m := loadDBLP(t)
	if m.NumRows() != 317080 || m.NumEntries() != 2099732 {
		t.Fatalf("dblp: %d rows, %d entries", m.NumRows(), m.NumEntries())
	}
	g, st, err := KNearest(m, 16, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dblp: %v", st)
	if st.Strategy != "prefix" {
		t.Errorf("dblp ran %q, want prefix", st.Strategy)
	}
	checkSample(t, m, g, 20, 8)
	checkFacilitiesAtScale(t, m, Options{}, 4)
}

func TestUserLists(t *testing.T) {
	m := userLists(30000, 1)
	g, st, err := KNearest(m, 16, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("userlists 3e4: %v", st)
	checkSample(t, m, g, 100, 9)
}

func benchKNearest(b *testing.B, m *matrix.Matrix, k int, opts Options) {
	b.ReportAllocs()
	var st Stats
	c0 := cpuTime()
	for b.Loop() {
		var err error
		_, st, err = KNearest(m, k, opts)
		if err != nil {
			b.Fatal(err)
		}
	}
	n := float64(m.NumRows())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
	// CPU time (all threads) is robust to other load on a shared machine.
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N)/n, "cpu-ns/row")
	b.ReportMetric(float64(st.Candidates)/float64(st.Distinct), "cands/distinct")
	b.ReportMetric(float64(st.Distinct), "distinct")
	b.Logf("%v (GOMAXPROCS %d)", st, runtime.GOMAXPROCS(0))
}

func BenchmarkKNearestAdult(b *testing.B) {
	benchKNearest(b, loadAdult(b), 16, Options{})
}

func BenchmarkKNearestDBLP(b *testing.B) {
	benchKNearest(b, loadDBLP(b), 16, Options{})
}

func BenchmarkKNearestUserLists(b *testing.B) {
	for _, n := range []int{1e4, 1e5, 1e6} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			benchKNearest(b, userLists(n, 1), 16, Options{})
		})
	}
}

// benchMeyerson times one pass of Meyerson's online facility location as
// the solver runs it, without and with UseNeighbours: points in random order, each opens a facility with
// probability dist/cost (cost = 2 × the sum of its 2k nearest distances,
// k = 8), else it is assigned to its nearest open facility.
func benchMeyerson(b *testing.B, m *matrix.Matrix) {
	for _, nb := range []bool{false, true} {
		name := "search"
		if nb {
			name = "neighbours"
		}
		b.Run(name, func(b *testing.B) { benchMeyersonWith(b, m, nb) })
	}
}

func benchMeyersonWith(b *testing.B, m *matrix.Matrix, useNeighbours bool) {
	g, _, err := KNearest(m, 16, Options{})
	if err != nil {
		b.Fatal(err)
	}
	n := m.NumRows()
	cost := make([]float64, n)
	for i := range cost {
		_, d := g.Row(i)
		for _, x := range d {
			cost[i] += 2 * float64(x)
		}
	}
	base := NewFacilities(m, Options{})
	if useNeighbours {
		if err := base.UseNeighbours(g); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	order := r.Perm(n)
	b.ResetTimer()
	opened := 0
	c0 := cpuTime()
	for b.Loop() {
		f := base.Empty()
		for _, i := range order {
			_, d, ok := f.Nearest(int32(i))
			if !ok || float64(d) >= cost[i] || r.Float64()*cost[i] < float64(d) {
				f.Add(int32(i))
			}
		}
		opened = f.Len()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/query")
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/query")
	b.ReportMetric(float64(opened), "open")
	b.Logf("strategy %s, %d rows, %d facilities opened", base.Strategy(), n, opened)
}

func BenchmarkFacilitiesAdult(b *testing.B) { benchMeyerson(b, loadAdult(b)) }
func BenchmarkFacilitiesDBLP(b *testing.B)  { benchMeyerson(b, loadDBLP(b)) }
func BenchmarkFacilitiesUserLists(b *testing.B) {
	for _, n := range []int{1e4, 1e5} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchMeyerson(b, userLists(n, 1)) })
	}
}

// checkFacilitiesAtScale opens and closes random rows of m and compares
// sampled Nearest answers with a scan of the open rows.
func checkFacilitiesAtScale(t *testing.T, m *matrix.Matrix, opts Options, seed uint64) {
	t.Helper()
	f := NewFacilities(m, opts)
	r := rand.New(rand.NewPCG(seed, 2))
	n := m.NumRows()
	open := map[int32]bool{}
	for round, adds := range []int{n / 200, n / 20, -n / 40} {
		for a := 0; a < max(adds, -adds); a++ {
			row := int32(r.IntN(n))
			if adds > 0 {
				f.Add(row)
				open[row] = true
			} else {
				f.Remove(row)
				delete(open, row)
			}
		}
		for s := 0; s < 100; s++ {
			row := int32(r.IntN(n))
			fac, dist, ok := f.Nearest(row)
			wf, wd := int32(-1), int32(0)
			for o := range open {
				d := hamming(m.Row(int(row)), m.Row(int(o)))
				if wf < 0 || d < wd || d == wd && o < wf {
					wf, wd = o, d
				}
			}
			if !ok || fac != wf || dist != wd {
				t.Fatalf("%s round %d: Nearest(%d) = %d,%d,%v want %d,%d", f.Strategy(), round, row, fac, dist, ok, wf, wd)
			}
		}
	}
}

func TestFacilitiesAtScale(t *testing.T) {
	checkFacilitiesAtScale(t, userLists(20000, 3), Options{}, 1)
	m := loadAdult(t) // skips when the data set is absent
	checkFacilitiesAtScale(t, m, Options{}, 2)
	checkFacilitiesAtScale(t, m, Options{Strategy: Prefix}, 3)
}
