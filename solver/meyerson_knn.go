package solver

import (
	"unsafe"

	"github.com/smoothanon/smoothanon/solver/internal/knn"
	"github.com/smoothanon/smoothanon/solver/internal/par"
	"github.com/smoothanon/smoothanon/solver/internal/prefetch"
)

// knnFacilities runs a restart's facilities on knn.Facilities. Rows are
// canonical users, ranked by the restart's processing order: then "lowest
// rank", knn's tie rule, is "earliest opened", the facSet tie rule, and both
// give the same clustering. knn's prefix-filtered search with entry
// signatures, over lists of the open facilities only, scales better on large
// power-law data (see knnFacilitiesLoad). One index (restarts.knnIndex) serves
// every restart.
type knnFacilities struct {
	f      *knn.Facilities
	facRow []int32 // facility number -> user
	rowFac []int32 // user -> facility number, -1 when none
	closed []bool
}

func (k *knnFacilities) count() int            { return len(k.facRow) }
func (k *knnFacilities) isClosed(g int32) bool { return k.closed[g] }
func (k *knnFacilities) startClosing()         {}
func (k *knnFacilities) close(g int32) {
	k.closed[g] = true
	k.f.Remove(k.facRow[g])
}
func (k *knnFacilities) nearestOpen(u int32) int32 {
	row, _, ok := k.f.Nearest(u)
	if !ok {
		return -1
	}
	return k.rowFac[row]
}

// knnIndex is the empty knn.Facilities set of the canonical users over
// m.ix, with the neighbour graph when there is one, built on first use and
// shared by the restarts.
func (m *restarts) knnIndex() *knn.Facilities {
	m.facOnce.Do(func() {
		s := m.s
		var err error
		m.facBase, err = m.ix.Facilities(knn.Options{Workers: par.Workers(s.p.Workers), MaxScan: s.maxScan(facilityMaxScan)})
		if err != nil {
			panic(err) // valid options: cannot happen
		}
		if m.graph != nil {
			if err := m.facBase.UseNeighbours(m.graph); err != nil {
				panic(err) // the graph is of s.canon: cannot happen
			}
		}
	})
	return m.facBase
}

// onKNN is restart r on knnFacilities (onFacSet's random stream, same
// decisions).
func (m *restarts) onKNN(r int) *run {
	s, cost := m.s, m.cost
	pr := s.pr
	rng, order := restartOrder(s.p.Seed, r, pr.n)
	rank := make([]int32, pr.n)
	kf := &knnFacilities{rowFac: make([]int32, pr.n)}
	for i, u := range order {
		rank[u] = int32(i)
		kf.rowFac[u] = -1
	}
	var err error
	if kf.f, err = m.knnIndex().EmptyRanked(rank); err != nil {
		panic(err) // rank is a permutation: cannot happen
	}
	ru := &run{fs: kf, assign: make([]int32, pr.n), index: r}
	for i, u := range order {
		// Hint the memory of the queries ahead (see knn.Facilities.Ahead):
		// on inputs larger than the CPU caches, taken in random order,
		// every one of these loads would miss the caches.
		kf.f.Ahead(order, i)
		hintAhead(pr, order, i, cost, ru.assign)
		p := pr.userPoint[u]
		row, d, ok := kf.f.Nearest(u)
		open := opens(rng, ok, d, cost[p])
		var g int32
		if open {
			kf.f.Add(u)
			g = int32(len(kf.facRow))
			kf.facRow = append(kf.facRow, u)
			kf.closed = append(kf.closed, false)
			kf.rowFac[u] = g
			ru.cost += cost[p]
		} else {
			g = kf.rowFac[row]
			ru.cost += float64(d)
		}
		ru.assign[u] = g
	}
	return ru
}

// aheadUser, aheadPoint and aheadRow are how many users ahead a restart
// (onFacSet, onKNN) hints a user's point, then (the point
// loaded) the point's per-restart state, cost and offsets and the user's
// assignment, then (the offsets loaded) the point's features.
// They are knn.Facilities.Ahead's leads, so both hint in step.
const (
	aheadUser  = knn.AheadLead0
	aheadPoint = knn.AheadLead1
	aheadRow   = knn.AheadLead2
)

// hintAhead hints what both restarts read of the users ahead of position
// i of order: the point of the user aheadUser on, then the cost and the
// assignment of the one aheadPoint on. It returns that one's point (its
// line loaded by now) for the caller's own per-point state, or -1 past the
// end.
func hintAhead(pr *problem, order []int32, i int, cost []float64, assign []int32) int32 {
	if j := i + aheadUser; j < len(order) {
		prefetch.Line(unsafe.Pointer(&pr.userPoint[order[j]]))
	}
	j := i + aheadPoint
	if j >= len(order) {
		return -1
	}
	v := order[j]
	q := pr.userPoint[v]
	prefetch.Line(unsafe.Pointer(&cost[q]))
	prefetch.Line(unsafe.Pointer(&assign[v]))
	return q
}
