package knn

import (
	"time"
)

// Others holds, for every row, the nearest groups of identical rows other
// than its own, each given by its lowest row, nearest first (ties by the
// lower row; under Options.MaxScan, by the distances the search assigned,
// as for KNearest). It is what a caller that treats identical rows as one point
// needs of KNearest, at the cost of a search for a few groups rather than
// many rows.
type Others struct {
	groupOf []int32 // row -> group
	off     []int64 // group g's list is row[off[g]:off[g+1]]
	row     []int32
	// Exact is true when every list holds the nearest groups; false when a
	// bounded search (Options.MaxScan) stopped some query early.
	Exact bool
}

// Of returns the lowest rows of the nearest other groups of row i, nearest
// first: as many as NearestOthers' k asked for, or every other group when
// there are fewer.
func (o *Others) Of(i int) []int32 {
	g := o.groupOf[i]
	return o.row[o.off[g]:o.off[g+1]]
}

// NearestOthers returns the k(size) nearest other groups of every group of
// size identical rows (see Others), searched as KNearest searches (opts
// likewise); a k below 0 asks for none.
func (ix *Index) NearestOthers(k func(size int) int, opts Options) (*Others, Stats, error) {
	if err := checkOptions(opts); err != nil {
		return nil, Stats{}, err
	}
	x := ix.x
	t1 := time.Now()
	others := max(x.numGroups()-1, 0)
	nb, st := ix.searchGroups(func(g int32) int { return min(max(k(int(x.size(g))), 0), others) }, opts)
	o := &Others{groupOf: x.groupOf, off: nb.off, row: make([]int32, len(nb.key)), Exact: nb.cut == 0}
	for i, key := range nb.key {
		o.row[i] = x.rowsOf(int32(uint32(key)))[0]
	}
	st.Search = time.Since(t1)
	return o, st, nil
}
