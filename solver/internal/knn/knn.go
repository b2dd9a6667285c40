// Package knn finds Hamming-distance nearest neighbours between the rows of
// a sparse binary matrix, for the smooth-k-anonymity solver.
//
// Rows are points; the distance of rows a and b is |a| + |b| − 2|a∩b|, the
// number of features held by exactly one of them. Everything here is
// deterministic: ties are broken by the lower row index, and results do not
// depend on Options.Workers. Everything is exact unless Options.MaxScan
// bounds the work per query (see there).
//
// KNearest lists the k nearest other rows of every row (the solver sums the
// βk nearest distances into facility costs and uses the lists to split
// clusters). Facilities is a dynamic set of open facility rows answering
// nearest-open-facility queries, for Meyerson's online facility
// location and for reassigning clients. Both search an Index of the rows;
// each builds its own unless given one built once by NewIndex
// (Index.KNearest, Index.Facilities). Index.NearestOthers is the search of
// KNearest for a caller that treats identical rows as one point: a few
// nearest other groups of identical rows, not k rows.
//
// Both first group identical rows (they are each other's distance-0
// neighbours; adult's 32,561 rows are 8,688 distinct ones) and then search
// between the distinct rows with one of two strategies (see Strategy; Auto
// picks Bitset when the distinct rows use at most BitsetMaxColumns columns
// and distinct² × ⌈columns/64⌉ ≤ 4e9, else Prefix):
//
//   - Bitset: every distinct row as a bitset over the columns, distances by
//     XOR and popcount, brute force over all pairs of distinct rows, O(U² ·
//     ⌈columns/64⌉) word operations for U distinct rows. It wins on dense,
//     low-dimensional data (adult: 102 columns, every row holds 8).
//   - Prefix: an inverted index over features ranked rarest first, searched
//     with the length, prefix and positional filters of exact set-similarity
//     joins. A candidate of degree d is within the current k-th distance D
//     of a query of degree a only if it shares t = ⌈(a+d−D)/2⌉ features with
//     it, so it holds one of the query's a−t+1 rarest features, and in the
//     list of the query's p-th feature only degrees d ≤ D+a−2p, and entries
//     whose feature sits early enough in the candidate, can qualify. Lists
//     are stored sorted by (degree, position, group) in runs, so a scan
//     stops or skips a run as soon as the filters fail; a 128-bit signature
//     per entry (exact bits for the 64 most frequent features, hashed bits
//     for the others) of the candidate's features from the entry's on,
//     against that of the query's from the p-th on (all a candidate first
//     met there can share), bounds the overlap before the candidate's
//     features are read. Ties at D matter only for lower row indices, which lets a run
//     that can only produce ties stop early. Candidates sharing nothing
//     come from the distinct rows sorted by degree (exact fill-in, distance
//     a+d). Queries run in an order that puts rows with the same frequent
//     features together, and each first checks the previous query and its
//     neighbours, which tightens D early (this changes the work, never the
//     result). Cost grows with the number of list entries within the bounds:
//     small for graphs such as dblp, larger (about √n per row) for
//     power-law user lists whose rows are made mostly of popular features.
//
// Facilities uses the same strategy as KNearest would: with Bitset a query
// scans the open distinct rows (O(open) popcounts); with Prefix it runs the
// search above for k = 1 over lists that hold only the open distinct rows
// (kept in the same (degree, position) runs, each run by tie-break label,
// updated on every Add and Remove, with a compact copy of the open rows'
// features that candidates are checked against), so a query's work and
// memory traffic follow the open facilities, not all rows. Given the KNearest graph
// (UseNeighbours), a query whose neighbour list holds an open facility
// closer than the list's last distance is answered from the list alone
// (only when the graph is exact, Graph.Exact). A caller querying rows in
// a known order (Meyerson's random one) calls Facilities.Ahead before each
// query, so the first cache lines of the queries a few rows ahead are
// loading while this one runs.
//
// Bounded search (Options.MaxScan > 0): on power-law data the lists of the
// popular features grow with the rows, and so does the exact work per
// query. With a bound, a Prefix query stops after reading MaxScan list
// entries and keeps the best rows found so far, filled up with rows sharing
// nothing, as always; distances of what it returns are exact, but nearer
// rows may be missed. The hints (KNearest) and the neighbour lists
// (Facilities) are read first and are not counted, so the best candidates
// are usually among those found. Bitset searches stay exact.
package knn

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// Strategy selects how distinct rows are searched.
type Strategy int

const (
	// Auto picks Bitset when the distinct rows have at most
	// BitsetMaxColumns columns and the brute force is cheap enough,
	// else Prefix.
	Auto Strategy = iota
	// Bitset is brute force over distinct rows stored as column bitsets.
	Bitset
	// Prefix is the filtered inverted-index search.
	Prefix
)

// BitsetMaxColumns is the largest number of distinct columns for which Auto
// considers the bitset brute force.
const BitsetMaxColumns = 512

// bitsetMaxPairWords bounds the brute-force work (distinct rows squared
// times bitset words) that Auto accepts.
const bitsetMaxPairWords = 4e9

func (s Strategy) String() string {
	switch s {
	case Auto:
		return "auto"
	case Bitset:
		return "bitset"
	case Prefix:
		return "prefix"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// Options tune KNearest and NewFacilities. The zero value is the default.
type Options struct {
	// Workers is the number of goroutines. Optional; default 0 means
	// GOMAXPROCS. Results do not depend on it.
	Workers int
	// Strategy forces a search strategy. Optional; default Auto.
	Strategy Strategy
	// MaxScan bounds the list entries one Prefix query reads. Optional;
	// default 0 means no bound (exact answers); at least 0. With a bound,
	// KNearest lists and Facilities.Nearest answers may miss nearer rows
	// (see the package documentation), and the work per query no longer
	// grows with the lengths of the lists.
	MaxScan int
}

// Stats describes a KNearest run.
type Stats struct {
	Strategy   string // strategy that ran: "bitset" or "prefix"
	Rows       int    // rows of the input
	Distinct   int    // distinct rows (groups of identical rows)
	Columns    int    // distinct features
	Candidates int64  // exact distance evaluations between distinct rows
	Cut        int64  // distinct-row queries stopped by Options.MaxScan
	Index      time.Duration
	Search     time.Duration
}

func (s Stats) String() string {
	return fmt.Sprintf("strategy=%s rows=%d distinct=%d columns=%d candidates=%d cut=%d index=%v search=%v",
		s.Strategy, s.Rows, s.Distinct, s.Columns, s.Candidates, s.Cut, s.Index.Round(time.Millisecond), s.Search.Round(time.Millisecond))
}

// Graph holds K nearest other rows of every row, row-major: the
// neighbours of row i are Idx[i*K:(i+1)*K] at distances Dist[i*K:(i+1)*K],
// sorted by (distance, row index).
type Graph struct {
	K    int
	Idx  []int32
	Dist []int32
	// Exact is true when every list holds the K nearest rows; false when
	// a bounded search (Options.MaxScan) stopped some query early, and
	// nearer rows than the listed ones may exist.
	Exact bool
}

// Row returns the neighbours of row i and their distances.
func (g *Graph) Row(i int) (idx, dist []int32) {
	return g.Idx[i*g.K : (i+1)*g.K], g.Dist[i*g.K : (i+1)*g.K]
}

// checkParams validates the inputs of KNearest.
func checkParams(m *matrix.Matrix, k int, opts Options) error {
	if err := checkMatrix(m); err != nil {
		return err
	}
	return checkSearch(k, opts)
}

// checkMatrix validates a matrix to index.
func checkMatrix(m *matrix.Matrix) error {
	if m == nil {
		return fmt.Errorf("knn: nil matrix")
	}
	if len(m.Offsets) != len(m.Users)+1 {
		return fmt.Errorf("knn: matrix has %d offsets for %d rows", len(m.Offsets), len(m.Users))
	}
	if len(m.Users) > 1<<31-1 {
		return fmt.Errorf("knn: %d rows exceed int32", len(m.Users))
	}
	if int64(len(m.Features)) > math.MaxUint32 {
		return fmt.Errorf("knn: %d matrix entries exceed uint32", len(m.Features))
	}
	return nil
}

// checkSearch validates the parameters of a search over an index.
func checkSearch(k int, opts Options) error {
	if k < 0 {
		return fmt.Errorf("knn: k = %d, want k >= 0", k)
	}
	return checkOptions(opts)
}

func checkOptions(opts Options) error {
	if opts.Workers < 0 {
		return fmt.Errorf("knn: Workers = %d, want >= 0 (0 = GOMAXPROCS)", opts.Workers)
	}
	if opts.Strategy < Auto || opts.Strategy > Prefix {
		return fmt.Errorf("knn: unknown strategy %d", int(opts.Strategy))
	}
	if opts.MaxScan < 0 {
		return fmt.Errorf("knn: MaxScan = %d, want >= 0 (0 = no bound)", opts.MaxScan)
	}
	return nil
}

// pickStrategy resolves Auto for an index.
func pickStrategy(s Strategy, x *index) Strategy {
	if s != Auto {
		return s
	}
	u := float64(x.numGroups())
	words := float64((x.ncols + 63) / 64)
	if x.ncols <= BitsetMaxColumns && u*u*words <= bitsetMaxPairWords {
		return Bitset
	}
	return Prefix
}

// KNearest returns, for every row of m, its k nearest other rows (identical
// rows included, at distance 0), sorted by (distance, row index). When m has
// fewer than k+1 rows, the graph has K = rows−1. It is NewIndex followed
// by Index.KNearest.
func KNearest(m *matrix.Matrix, k int, opts Options) (*Graph, Stats, error) {
	if err := checkParams(m, k, opts); err != nil {
		return nil, Stats{}, err
	}
	ix, err := NewIndex(m, opts.Workers)
	if err != nil {
		return nil, Stats{}, err
	}
	return ix.KNearest(k, opts)
}

// KNearest is the package function KNearest over the indexed rows;
// Stats.Index is the time NewIndex took.
func (ix *Index) KNearest(k int, opts Options) (*Graph, Stats, error) {
	if err := checkSearch(k, opts); err != nil {
		return nil, Stats{}, err
	}
	x := ix.x
	n := x.rows
	K := min(k, max(n-1, 0))
	ng := x.numGroups()
	t1 := time.Now()
	// A group needs K rows besides itself; its identical rows come first.
	nb, st := ix.searchGroups(func(g int32) int {
		return min(max(K-int(x.size(g)-1), 0), ng-1)
	}, opts)
	g := &Graph{K: K, Idx: make([]int32, n*K), Dist: make([]int32, n*K), Exact: nb.cut == 0}
	if K > 0 {
		expand(x, nb, g, par.Workers(opts.Workers))
	}
	st.Search = time.Since(t1)
	return g, st, nil
}

// searchGroups finds the kOf(g) nearest other groups of every group g with
// the strategy opts ask for, and the Stats of the search but its time.
func (ix *Index) searchGroups(kOf func(int32) int, opts Options) (*groupLists, Stats) {
	x := ix.x
	workers := par.Workers(opts.Workers)
	st := Stats{Rows: x.rows, Distinct: x.numGroups(), Columns: x.ncols, Index: ix.build}
	strat := pickStrategy(opts.Strategy, x)
	st.Strategy = strat.String()
	var nb *groupLists
	switch strat {
	case Bitset:
		nb = searchBitset(x, kOf, workers)
	default:
		nb = searchPrefix(x, kOf, workers, int64(opts.MaxScan))
	}
	st.Candidates, st.Cut = nb.candidates, nb.cut
	return nb, st
}

// groupLists are the nearest other groups of each group, as keys
// dist<<32 | group, ascending.
type groupLists struct {
	off        []int64
	key        []uint64
	candidates int64
	cut        int64 // queries stopped by the scan bound
}

func newGroupLists(x *index, kOf func(int32) int) *groupLists {
	ng := x.numGroups()
	off := make([]int64, ng+1)
	for g := 0; g < ng; g++ {
		off[g+1] = off[g] + int64(kOf(int32(g)))
	}
	return &groupLists{off: off, key: make([]uint64, off[ng])}
}

// expand turns group neighbour lists into row neighbour lists.
func expand(x *index, nb *groupLists, out *Graph, workers int) {
	K := out.K
	ng := x.numGroups()
	scratch := make([][]uint64, workers)
	par.For(workers, ng, 256, func(w, lo, hi int) {
		buf := scratch[w]
		for g := int32(lo); g < int32(hi); g++ {
			rows := x.rowsOf(g)
			need := K - (len(rows) - 1)
			buf = buf[:0]
			if need > 0 {
				for _, key := range nb.key[nb.off[g]:nb.off[g+1]] {
					d := key >> 32
					h := int32(uint32(key))
					for _, r := range x.rowsOf(h)[:min(need, int(x.size(h)))] {
						buf = append(buf, d<<32|uint64(r))
					}
				}
				slices.Sort(buf)
				buf = buf[:need]
			}
			for _, i := range rows {
				idx := out.Idx[int(i)*K : (int(i)+1)*K]
				dist := out.Dist[int(i)*K : (int(i)+1)*K]
				j := 0
				for _, r := range rows {
					if j == K {
						break
					}
					if r != i {
						idx[j], dist[j] = r, 0
						j++
					}
				}
				for _, key := range buf {
					if j == K {
						break
					}
					idx[j], dist[j] = int32(uint32(key)), int32(key>>32)
					j++
				}
			}
		}
		scratch[w] = buf
	})
}

// topK keeps the smallest keys seen, up to a capacity, in a max-heap.
type topK struct {
	n int
	h []uint64
}

func (t *topK) reset(n int) { t.n = n; t.h = t.h[:0] }

func (t *topK) full() bool { return len(t.h) >= t.n }

// bound is the largest key that can still enter: the worst kept key when
// full, else all ones.
func (t *topK) bound() uint64 {
	if len(t.h) < t.n {
		return ^uint64(0)
	}
	return t.h[0]
}

// push offers a key.
func (t *topK) push(k uint64) {
	h := t.h
	if len(h) < t.n {
		h = append(h, k)
		i := len(h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if h[p] >= h[i] {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		t.h = h
		return
	}
	if t.n == 0 || k >= h[0] {
		return
	}
	h[0] = k
	i, n := 0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && h[r] > h[l] {
			l = r
		}
		if h[i] >= h[l] {
			break
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// sortedInto writes the kept keys ascending into dst (len == number kept).
func (t *topK) sortedInto(dst []uint64) {
	copy(dst, t.h)
	slices.Sort(dst)
}
