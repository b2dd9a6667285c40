package knn

import (
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// buildIndex groups identical rows and renumbers features by rarity.
func buildIndex(m *matrix.Matrix, workers int) *index {
	x := &index{rows: m.NumRows()}
	x.setGroups(lowestEqualRows(m, workers))
	x.setColumns(m, workers)
	x.rankColumns(workers)
	return x
}

// lowestEqualRows returns, per row, the lowest row equal to it: rows are
// sorted by hash, and equal-hash runs split by exact comparison.
func lowestEqualRows(m *matrix.Matrix, workers int) []int32 {
	n := m.NumRows()
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
	return rep
}

// setGroups numbers the groups of equal rows (rep: row -> lowest equal
// row) in order of their lowest row and fills groupOf, mStart and members.
func (x *index) setGroups(rep []int32) {
	n := len(rep)
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
}

// setColumns numbers densely, in feature id order, the features of the
// groups' rows, and fills gOff, gFeat (with column numbers, ascending) and
// ncols.
func (x *index) setColumns(m *matrix.Matrix, workers int) {
	ng := int32(x.numGroups())
	row := func(g int32) []uint32 { return m.Row(int(x.members[x.mStart[g]])) }
	var entries int64
	var maxF uint32
	for g := int32(0); g < ng; g++ {
		r := row(g)
		entries += int64(len(r))
		if len(r) > 0 && r[len(r)-1] > maxF {
			maxF = r[len(r)-1]
		}
	}
	x.gOff = make([]int64, ng+1)
	x.gFeat = make([]int32, entries)
	for g := int32(0); g < ng; g++ {
		x.gOff[g+1] = x.gOff[g] + int64(len(row(g)))
	}
	var colOf func(f uint32) int32
	var colFeat []uint32 // column -> feature id
	if entries > 0 && int64(maxF) < 4*entries+(1<<16) {
		// Feature ids are few enough for a lookup table.
		dense := make([]int32, int64(maxF)+1)
		for i := range dense {
			dense[i] = -1
		}
		for g := int32(0); g < ng; g++ {
			for _, f := range row(g) {
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
			all = append(all, row(g)...)
		}
		slices.Sort(all)
		colFeat = slices.Compact(all)
		colOf = func(f uint32) int32 {
			i, _ := slices.BinarySearch(colFeat, f)
			return int32(i)
		}
	}
	x.ncols = len(colFeat)
	par.For(workers, int(ng), 4096, func(_, lo, hi int) {
		for g := int32(lo); g < int32(hi); g++ {
			out := x.gFeat[x.gOff[g]:x.gOff[g+1]]
			for j, f := range row(g) {
				out[j] = colOf(f)
			}
		}
	})
}

// rankColumns replaces the columns in gFeat by their ranks by (frequency
// over groups, feature id) and sorts each group's list.
func (x *index) rankColumns(workers int) {
	freq := make([]int32, x.ncols)
	for _, c := range x.gFeat {
		freq[c]++
	}
	order := make([]int32, x.ncols)
	for c := range order {
		order[c] = int32(c)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if freq[a] != freq[b] {
			return int(freq[a] - freq[b])
		}
		return int(a - b) // columns ascend with feature ids
	})
	rank := make([]int32, x.ncols)
	for r, c := range order {
		rank[c] = int32(r)
	}
	par.For(workers, x.numGroups(), 4096, func(_, lo, hi int) {
		for g := lo; g < hi; g++ {
			out := x.gFeat[x.gOff[g]:x.gOff[g+1]]
			for j, c := range out {
				out[j] = rank[c]
			}
			slices.Sort(out)
		}
	})
}
