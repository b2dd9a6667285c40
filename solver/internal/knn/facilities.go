package knn

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/prefetch"
)

// Facilities is a dynamic set of open facilities, each a row of the matrix,
// answering nearest-open-facility queries for any row (exact unless
// Options.MaxScan bounds them).
//
// The read-only part (row groups, bitsets or degrees, and the optional
// neighbour graph) is built once by NewFacilities and shared by Empty
// copies, so independent restarts can run on separate goroutines. A single
// Facilities is not safe for concurrent use.
//
// Ties between facilities at equal distance go to the lower row, or to the
// lower rank for a set made by EmptyRanked; a group's label is the lowest
// rank of its open rows (a row's rank is the row itself by default).
type Facilities struct {
	sh *facShared
	// rank is row -> label and byRank its inverse; nil for the identity.
	rank, byRank []int32

	openRow []bool
	count   int
	gCount  []int32 // open rows per group
	minOpen []int32 // lowest label of the group's open rows, -1 when none

	// Bitset strategy: open groups in a dense list.
	openList []int32
	listPos  []int32 // group -> position in openList, -1 when closed

	// Prefix strategy: lists of the open groups, open groups by degree
	// (bit i of openDeg is set when P.byDeg[i] is open; none is open
	// below degLo).
	ol      *openLists
	openDeg []uint64
	degLo   int64
	// byDegHeap[d] holds (label<<32 | group) keys of the open groups of
	// degree d, a min-heap with stale keys (closed or relabelled groups)
	// dropped when they reach the top.
	byDegHeap [][]uint64
	s         *searcher
}

type facShared struct {
	x     *index
	strat Strategy
	nb    *Graph   // optional neighbour lists (UseNeighbours)
	bits  []uint64 // Bitset
	words int
	P     *postings // Prefix: degrees and signatures only
	// maxScan bounds the open-list entries of one Prefix query (0: no
	// bound, exact answers; see Options.MaxScan).
	maxScan int64
}

// NewFacilities prepares an empty facility set over the rows of m. It
// panics on a nil or malformed matrix or invalid options (programming
// errors). opts.Workers only affects the build; with opts.MaxScan > 0,
// Nearest may return a farther facility than the nearest (see
// Options.MaxScan), at its exact distance. It is NewIndex followed by
// Index.Facilities.
func NewFacilities(m *matrix.Matrix, opts Options) *Facilities {
	if err := checkParams(m, 0, opts); err != nil {
		panic(err)
	}
	ix, err := NewIndex(m, opts.Workers)
	if err != nil {
		panic(err)
	}
	f, err := ix.Facilities(opts)
	if err != nil {
		panic(err)
	}
	return f
}

// Facilities is NewFacilities over the indexed rows; it errs on invalid
// options.
func (ix *Index) Facilities(opts Options) (*Facilities, error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	x := ix.x
	sh := &facShared{x: x, strat: pickStrategy(opts.Strategy, x), maxScan: int64(opts.MaxScan)}
	switch sh.strat {
	case Bitset:
		sh.bits, sh.words = bitsets(x)
	default:
		sh.P = buildDegrees(x)
	}
	return newFacilities(sh), nil
}

func newFacilities(sh *facShared) *Facilities {
	x := sh.x
	ng := x.numGroups()
	f := &Facilities{
		sh:      sh,
		openRow: make([]bool, x.rows),
		gCount:  make([]int32, ng),
		minOpen: make([]int32, ng),
	}
	for g := range f.minOpen {
		f.minOpen[g] = -1
	}
	if sh.strat == Bitset {
		f.listPos = make([]int32, ng)
		for g := range f.listPos {
			f.listPos[g] = -1
		}
	} else {
		f.ol = newOpenLists(x.ncols, ng)
		f.openDeg = make([]uint64, (ng+63)/64+1)
		f.byDegHeap = make([][]uint64, len(sh.P.degStart)-1)
		f.s = newSearcher(x, sh.P, sh.maxScan, 0) // nearestOpen stamps slots (openLists.slotSeen)
	}
	return f
}

// UseNeighbours hands the facility set a KNearest graph of the same matrix
// (any K), shared with every Empty copy; call it before the sets are used.
// Queries then start the search from the best open neighbour in their own
// list, and, when the graph is exact (Graph.Exact), a query whose list
// holds an open facility nearer than the list's last distance is answered
// from the list in O(K). Exact answers stay exact; bounded ones are never
// worse than the best open neighbour.
func (f *Facilities) UseNeighbours(g *Graph) error {
	n := len(f.openRow)
	if g == nil || g.K < 0 || len(g.Idx) != n*g.K || len(g.Dist) != n*g.K {
		return fmt.Errorf("knn: neighbour graph does not fit the %d facility rows", n)
	}
	f.sh.nb = g
	return nil
}

// Empty returns a new, empty facility set over the same matrix, sharing
// the read-only index with f (cheap: no index is rebuilt). Ties go to the
// lower row.
func (f *Facilities) Empty() *Facilities { return newFacilities(f.sh) }

// EmptyRanked is Empty with ties going to the row of lower rank instead:
// rank[row] is the rank of row and must be a permutation of 0..rows−1; the
// set keeps rank, which must not change while the set is in use. It
// lets one index serve facility sets with different tie orders (the
// solver's restarts break ties by opening order) without renumbering rows.
func (f *Facilities) EmptyRanked(rank []int32) (*Facilities, error) {
	n := len(f.openRow)
	if len(rank) != n {
		return nil, fmt.Errorf("knn: %d ranks for %d facility rows", len(rank), n)
	}
	byRank := make([]int32, n)
	for i := range byRank {
		byRank[i] = -1
	}
	for row, r := range rank {
		if r < 0 || int(r) >= n || byRank[r] >= 0 {
			return nil, fmt.Errorf("knn: rank %d of row %d is out of range or repeated (want a permutation of 0..%d)", r, row, n-1)
		}
		byRank[r] = int32(row)
	}
	e := newFacilities(f.sh)
	e.rank, e.byRank = rank, byRank
	return e, nil
}

// label is the tie-break label of row.
func (f *Facilities) label(row int32) int32 {
	if f.rank == nil {
		return row
	}
	return f.rank[row]
}

// rowOf is the row of a label.
func (f *Facilities) rowOf(label int32) int32 {
	if f.byRank == nil {
		return label
	}
	return f.byRank[label]
}

// Strategy is the search strategy in use ("bitset" or "prefix").
func (f *Facilities) Strategy() string { return f.sh.strat.String() }

// Len is the number of open facilities.
func (f *Facilities) Len() int { return f.count }

// IsOpen reports whether row is an open facility.
func (f *Facilities) IsOpen(row int32) bool { return f.openRow[row] }

func (f *Facilities) checkRow(row int32) {
	if row < 0 || int(row) >= len(f.openRow) {
		panic(fmt.Sprintf("knn: facility row %d out of range [0,%d)", row, len(f.openRow)))
	}
}

// Add opens row as a facility. Adding an open row does nothing.
func (f *Facilities) Add(row int32) {
	f.checkRow(row)
	if f.openRow[row] {
		return
	}
	f.openRow[row] = true
	f.count++
	g := f.sh.x.groupOf[row]
	f.gCount[g]++
	if l := f.label(row); f.gCount[g] == 1 {
		f.minOpen[g] = l
		f.setGroup(g, true)
	} else if l < f.minOpen[g] {
		f.relabel(g, l)
	}
}

// Remove closes the facility at row. Removing a closed row does nothing.
func (f *Facilities) Remove(row int32) {
	f.checkRow(row)
	if !f.openRow[row] {
		return
	}
	f.openRow[row] = false
	f.count--
	x := f.sh.x
	g := x.groupOf[row]
	f.gCount[g]--
	if f.gCount[g] == 0 {
		f.setGroup(g, false)
		f.minOpen[g] = -1
		return
	}
	if f.minOpen[g] == f.label(row) {
		l := int32(-1)
		for _, r := range x.rowsOf(g) {
			if f.openRow[r] && (l < 0 || f.label(r) < l) {
				l = f.label(r)
			}
		}
		f.relabel(g, l)
	}
}

// relabel sets the lowest label of the open group g.
func (f *Facilities) relabel(g, label int32) {
	if f.ol != nil {
		F := f.sh.x.feats(g)
		f.ol.remove(F, g, f.minOpen[g])
		f.minOpen[g] = label
		f.ol.insert(f.sh.P, F, g, label)
		f.pushDeg(g)
		return
	}
	f.minOpen[g] = label
}

// pushDeg offers the open group g under its current label to the heap of
// its degree.
func (f *Facilities) pushDeg(g int32) {
	d := f.sh.x.deg(g)
	h := append(f.byDegHeap[d], uint64(f.minOpen[g])<<32|uint64(g))
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	f.byDegHeap[d] = h
}

// minOfDegree is the lowest label of an open group of degree d, or -1.
func (f *Facilities) minOfDegree(d int) int32 {
	h := f.byDegHeap[d]
	for len(h) > 0 {
		l, g := int32(h[0]>>32), int32(uint32(h[0]))
		if f.minOpen[g] == l {
			return l // live: g is open with this label
		}
		// Stale: pop.
		n := len(h) - 1
		h[0] = h[n]
		h = h[:n]
		for i := 0; ; {
			c := 2*i + 1
			if c >= n {
				break
			}
			if c+1 < n && h[c+1] < h[c] {
				c++
			}
			if h[i] <= h[c] {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
		f.byDegHeap[d] = h
	}
	return -1
}

// setGroup marks group g open or closed in the search structure; its
// label minOpen[g] is set.
func (f *Facilities) setGroup(g int32, open bool) {
	if f.sh.strat == Bitset {
		if open {
			f.listPos[g] = int32(len(f.openList))
			f.openList = append(f.openList, g)
		} else {
			p := f.listPos[g]
			last := f.openList[len(f.openList)-1]
			f.openList[p] = last
			f.listPos[last] = p
			f.openList = f.openList[:len(f.openList)-1]
			f.listPos[g] = -1
		}
		return
	}
	P, F := f.sh.P, f.sh.x.feats(g)
	i := int64(P.degPos[g])
	if open {
		f.openDeg[i>>6] |= 1 << (uint(i) & 63)
		f.degLo = min(f.degLo, i)
		f.ol.open(P, F, g, f.minOpen[g])
		f.pushDeg(g)
	} else {
		f.openDeg[i>>6] &^= 1 << (uint(i) & 63)
		f.ol.close(F, g, f.minOpen[g])
	}
}

// Nearest returns the open facility nearest to row and its distance; ties
// go to the lower label (see Facilities). ok is false when no facility is
// open. A row that is itself open is its own nearest facility (distance 0).
func (f *Facilities) Nearest(row int32) (fac int32, dist int32, ok bool) {
	f.checkRow(row)
	if f.count == 0 {
		return -1, 0, false
	}
	x := f.sh.x
	u := x.groupOf[row]
	if f.gCount[u] > 0 {
		return f.rowOf(f.minOpen[u]), 0, true
	}
	seed := ^uint64(0) // dist<<32 | label
	if g := f.sh.nb; g != nil && g.K > 0 {
		// In an exact graph every row nearer than the last listed
		// distance is listed, so the best open one below it is the
		// answer; else the best open one seeds the search. Lists ascend
		// by distance (each distance by row, not by label: all of the
		// best distance are read).
		idx, dist := g.Row(int(row))
		for i, j := range idx {
			if seed != ^uint64(0) && uint64(dist[i]) > seed>>32 {
				break
			}
			if f.openRow[j] {
				seed = min(seed, uint64(dist[i])<<32|uint64(f.label(j)))
			}
		}
		if seed != ^uint64(0) && g.Exact && (int32(seed>>32) < dist[g.K-1] || g.K == x.rows-1) {
			return f.rowOf(int32(uint32(seed))), int32(seed >> 32), true
		}
	}
	var best uint64
	if f.sh.strat == Bitset {
		best = min(seed, f.nearestBitset(u))
	} else {
		t := &f.s.top
		t.reset(1)
		if seed != ^uint64(0) {
			t.push(seed) // a bound from the start; run may improve on it
		}
		f.nearestOpen(u)
		best = t.h[0]
	}
	return f.rowOf(int32(uint32(best))), int32(best >> 32), true
}

func (f *Facilities) nearestBitset(u int32) uint64 {
	W := f.sh.words
	b := f.sh.bits
	q := b[int(u)*W : (int(u)+1)*W]
	best := ^uint64(0)
	switch W {
	case 1:
		q0 := q[0]
		for _, g := range f.openList {
			key := uint64(bits.OnesCount64(q0^b[g]))<<32 | uint64(f.minOpen[g])
			best = min(best, key)
		}
	case 2:
		q0, q1 := q[0], q[1]
		for _, g := range f.openList {
			r := b[2*g : 2*g+2 : 2*g+2]
			key := uint64(bits.OnesCount64(q0^r[0])+bits.OnesCount64(q1^r[1]))<<32 | uint64(f.minOpen[g])
			best = min(best, key)
		}
	default:
		for _, g := range f.openList {
			r := b[int(g)*W : (int(g)+1)*W]
			d := 0
			for j, qw := range q {
				d += bits.OnesCount64(qw ^ r[j])
			}
			best = min(best, uint64(d)<<32|uint64(f.minOpen[g]))
		}
	}
	return best
}

// AheadLead0, AheadLead1 and AheadLead2 are how many queries ahead Ahead
// hints each of its stages: stage s reads what stage s−1 loaded, so it
// runs closer to the query. A query takes far longer than a memory
// access, so short leads suffice; longer ones let the lines fall out of
// the near caches again (see docs/decisions/019-solver-memory-access.md).
// A caller hinting its own per-row memory in the same loop uses the same
// leads.
const (
	AheadLead0 = 24
	AheadLead1 = 12
	AheadLead2 = 4
)

// Ahead hints the CPU to load the memory that Nearest(order[j]) will read
// first, for rows order[j] a few positions after i ≥ 0: the row's group
// and neighbour list, then the group's counts and feature offsets and the
// neighbours' open flags, then the group's features and the ranks of the
// open neighbours. A loop that queries order[i] for i = 0, 1, … and calls
// Ahead(order, i) before each query overlaps these loads, which otherwise
// miss the caches one after the other when the rows are far more than the
// caches hold and the order is random (Meyerson's restarts). It changes no
// result; rows in order must be valid, as for Nearest.
func (f *Facilities) Ahead(order []int32, i int) {
	x, nb := f.sh.x, f.sh.nb
	if nb != nil && nb.K == 0 {
		nb = nil
	}
	if j := i + AheadLead0; j < len(order) {
		row := order[j]
		prefetch.Line(unsafe.Pointer(&x.groupOf[row]))
		if nb != nil {
			k := int(row) * nb.K
			prefetch.Line(unsafe.Pointer(&nb.Idx[k]))
			prefetch.Line(unsafe.Pointer(&nb.Idx[k+nb.K-1]))
			prefetch.Line(unsafe.Pointer(&nb.Dist[k]))
			prefetch.Line(unsafe.Pointer(&nb.Dist[k+nb.K-1]))
		}
	}
	if j := i + AheadLead1; j < len(order) {
		row := order[j]
		u := x.groupOf[row]
		prefetch.Line(unsafe.Pointer(&f.gCount[u]))
		prefetch.Line(unsafe.Pointer(&x.gOff[u]))
		prefetch.Line(unsafe.Pointer(&x.gOff[u+1]))
		if nb != nil {
			for _, v := range nb.Idx[int(row)*nb.K : int(row+1)*nb.K] {
				prefetch.Line(unsafe.Pointer(&f.openRow[v]))
			}
		}
	}
	if j := i + AheadLead2; j < len(order) {
		row := order[j]
		u := x.groupOf[row]
		if lo, hi := x.gOff[u], x.gOff[u+1]; lo < hi {
			prefetch.Line(unsafe.Pointer(&x.gFeat[lo]))
			prefetch.Line(unsafe.Pointer(&x.gFeat[hi-1]))
		}
		if nb != nil && f.rank != nil {
			for _, v := range nb.Idx[int(row)*nb.K : int(row+1)*nb.K] {
				if f.openRow[v] {
					prefetch.Line(unsafe.Pointer(&f.rank[v]))
				}
			}
		}
	}
}
