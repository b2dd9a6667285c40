package knn

import (
	"fmt"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// Index is the read-only index of a matrix's rows that searches read:
// identical rows grouped, features renumbered by rarity. KNearest and
// NewFacilities each build one; a caller searching the same rows both ways
// builds it once with NewIndex and calls Index.KNearest and
// Index.Facilities (the index holds a copy of every distinct row, so
// building it once saves both the time and the memory of a second copy).
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
