package knn

import (
	"fmt"
	"slices"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// Index is the read-only index of a matrix's rows that searches read:
// identical rows grouped, features renumbered by rarity. KNearest and
// NewFacilities each build one; a caller searching the same rows both ways
// builds it once with NewIndex and calls Index.KNearest and
// Index.Facilities (on a million generated user lists the build takes
// about a quarter of a second and the index holds a copy of every row).
// It is safe for concurrent use.
type Index struct {
	x     *index
	build time.Duration // how long NewIndex took
}

// NewIndex indexes the rows of m, which must not change while the index
// is in use. workers is the number of goroutines (0: GOMAXPROCS); the
// index does not depend on it.
func NewIndex(m *matrix.Matrix, workers int) (*Index, error) {
	if err := checkMatrix(m); err != nil {
		return nil, err
	}
	if workers < 0 {
		return nil, fmt.Errorf("knn: workers = %d, want >= 0 (0 = GOMAXPROCS)", workers)
	}
	t0 := time.Now()
	x := buildIndex(m, par.Workers(workers))
	return &Index{x: x, build: time.Since(t0)}, nil
}

// index is the static part shared by every search: identical rows grouped,
// features renumbered by rarity, and the group feature lists.
//
// Groups are numbered in order of their first (lowest) row, so comparing
// group ids compares the lowest rows of the groups. Feature ranks order
// features by (number of groups holding them, feature id) ascending, so the
// rank-sorted feature list of a group starts with its rarest features.
type index struct {
	rows    int
	groupOf []int32 // row -> group
	mStart  []int32 // group g's rows are members[mStart[g]:mStart[g+1]], ascending
	members []int32

	ncols int     // distinct features
	gOff  []int64 // group g's feature ranks are gFeat[gOff[g]:gOff[g+1]], ascending
	gFeat []int32
}

func (x *index) numGroups() int        { return len(x.mStart) - 1 }
func (x *index) feats(g int32) []int32 { return x.gFeat[x.gOff[g]:x.gOff[g+1]] }
func (x *index) deg(g int32) int32     { return int32(x.gOff[g+1] - x.gOff[g]) }
func (x *index) size(g int32) int32    { return x.mStart[g+1] - x.mStart[g] }
func (x *index) rowsOf(g int32) []int32 {
	return x.members[x.mStart[g]:x.mStart[g+1]]
}

// buildIndex groups identical rows and renumbers features by rarity.
func buildIndex(m *matrix.Matrix, workers int) *index {
	n := m.NumRows()
	x := &index{rows: n}

	// 1. Group identical rows: sort rows by hash, split equal-hash runs
	// by exact comparison. rep[i] is the lowest row equal to row i.
	type hr struct {
		h uint64
		i int32
	}
	hs := make([]hr, n)
	par.For(workers, n, 4096, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			hs[i] = hr{matrix.HashRow(m.Row(i)), int32(i)}
		}
	})
	par.SortFunc(workers, hs, func(a, b hr) int {
		if a.h != b.h {
			if a.h < b.h {
				return -1
			}
			return 1
		}
		return int(a.i - b.i)
	})
	rep := make([]int32, n)
	var heads []int32 // first rows of the groups met so far in this run
	for s := 0; s < n; {
		e := s + 1
		for e < n && hs[e].h == hs[s].h {
			e++
		}
		heads = heads[:0]
		for _, it := range hs[s:e] {
			r := m.Row(int(it.i))
			found := int32(-1)
			for _, hd := range heads {
				if slices.Equal(m.Row(int(hd)), r) {
					found = hd
					break
				}
			}
			if found < 0 {
				heads = append(heads, it.i) // rows ascend within a run
				found = it.i
			}
			rep[it.i] = found
		}
		s = e
	}
	hs = nil

	x.groupOf = make([]int32, n)
	var ng int32
	count := make([]int32, 0, n/2+1)
	for i := 0; i < n; i++ {
		if rep[i] == int32(i) {
			x.groupOf[i] = ng
			ng++
			count = append(count, 0)
		} else {
			x.groupOf[i] = x.groupOf[rep[i]]
		}
		count[x.groupOf[i]]++
	}
	x.mStart = make([]int32, ng+1)
	for g := int32(0); g < ng; g++ {
		x.mStart[g+1] = x.mStart[g] + count[g]
	}
	x.members = make([]int32, n)
	fill := slices.Clone(x.mStart[:ng])
	for i := 0; i < n; i++ {
		g := x.groupOf[i]
		x.members[fill[g]] = int32(i)
		fill[g]++
	}
	rep, count, fill = nil, nil, nil

	// 2. Dense column numbers for the features of the group representatives.
	var entries int64
	var maxF uint32
	for g := int32(0); g < ng; g++ {
		r := m.Row(int(x.members[x.mStart[g]]))
		entries += int64(len(r))
		if len(r) > 0 && r[len(r)-1] > maxF {
			maxF = r[len(r)-1]
		}
	}
	x.gOff = make([]int64, ng+1)
	x.gFeat = make([]int32, entries)
	for g := int32(0); g < ng; g++ {
		x.gOff[g+1] = x.gOff[g] + int64(len(m.Row(int(x.members[x.mStart[g]]))))
	}
	var colOf func(f uint32) int32
	var ncols int
	var colFeat []uint32 // column -> feature id
	if entries > 0 && int64(maxF) < 4*entries+(1<<16) {
		dense := make([]int32, int64(maxF)+1)
		for i := range dense {
			dense[i] = -1
		}
		for g := int32(0); g < ng; g++ {
			for _, f := range m.Row(int(x.members[x.mStart[g]])) {
				dense[f] = 0
			}
		}
		for f := range dense {
			if dense[f] == 0 {
				dense[f] = int32(len(colFeat))
				colFeat = append(colFeat, uint32(f))
			}
		}
		colOf = func(f uint32) int32 { return dense[f] }
	} else {
		all := make([]uint32, 0, entries)
		for g := int32(0); g < ng; g++ {
			all = append(all, m.Row(int(x.members[x.mStart[g]]))...)
		}
		slices.Sort(all)
		colFeat = slices.Compact(all)
		colOf = func(f uint32) int32 {
			i, _ := slices.BinarySearch(colFeat, f)
			return int32(i)
		}
	}
	ncols = len(colFeat)
	x.ncols = ncols
	par.For(workers, int(ng), 4096, func(_, lo, hi int) {
		for g := lo; g < hi; g++ {
			out := x.gFeat[x.gOff[g]:x.gOff[g+1]]
			for j, f := range m.Row(int(x.members[x.mStart[g]])) {
				out[j] = colOf(f)
			}
		}
	})

	// 3. Rank columns by (frequency over groups, feature id).
	freq := make([]int32, ncols)
	for _, c := range x.gFeat {
		freq[c]++
	}
	order := make([]int32, ncols)
	for c := range order {
		order[c] = int32(c)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if freq[a] != freq[b] {
			return int(freq[a] - freq[b])
		}
		return int(a - b) // columns ascend with feature ids
	})
	rank := make([]int32, ncols)
	for r, c := range order {
		rank[c] = int32(r)
	}
	par.For(workers, int(ng), 4096, func(_, lo, hi int) {
		for g := lo; g < hi; g++ {
			out := x.gFeat[x.gOff[g]:x.gOff[g+1]]
			for j, c := range out {
				out[j] = rank[c]
			}
			slices.Sort(out)
		}
	})
	return x
}

// interCount is |a ∩ b| for ascending lists.
func interCount(a, b []int32) int32 {
	var c int32
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		if x == y {
			c++
			i++
			j++
		} else if x < y {
			i++
		} else {
			j++
		}
	}
	return c
}

// dist is the Hamming distance between groups g and h.
func (x *index) dist(g, h int32) int32 {
	a, b := x.feats(g), x.feats(h)
	return int32(len(a)+len(b)) - 2*interCount(a, b)
}
