package solver

import (
	"slices"

	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// swapExpendable is the number of members of a cluster that a swap tries
// to send away for a user joining it: those whose departure alone lowered
// the cluster's s + λ·c most when its list was made (see swapRefindSize).
// Trying every member gains little for many times the time (see
// docs/decisions/014-swap-pass.md).
const swapExpendable = 4

// A swap pass visits every swapProbe-th point first (a sample spread
// over the canonical order) and stops there when its swaps, scaled to all
// points, would raise the Jaccard by less than swapMinGain of itself.
// A whole pass costs much of a solve and pays on data with communities
// but not on power-law user lists (see docs/decisions/014-swap-pass.md).
const (
	swapProbe   = 8
	swapMinGain = 0.01
)

// swapRefindSize is the largest cluster whose expendable members are
// found again after every swap that changes it. A larger cluster only
// drops the member that left (one member more or less barely moves the
// others' departures) and is searched again when its list runs out.
const swapRefindSize = 32

// swapRefine runs one swap pass over the clusters improve chose, then,
// unless the pass stopped at its probe, one move pass, as the swaps have
// changed the clusters the moves see (the moves search the nearest
// centres indexed before the swaps: indexing again costs a pass). It
// returns the clusters and their cost. Only the chosen candidate is
// swapped: a losing candidate's pass would cost as much for nothing (on
// user lists the Meyerson candidate, which always loses there, passes its
// probe). A second swap pass would gain far less than the first for as
// much work (see docs/decisions/014-swap-pass.md). r, if not nil, is the
// refiner refine left holding clusters: its nearest centres that the
// clusters' last changes cannot have moved are kept (indexCentres).
func (s *state) swapRefine(clusters [][]int32, r *refiner) ([][]int32, cost, error) {
	if r == nil {
		r = s.newRefiner(clusters)
	}
	r.indexCentres()
	r.findNearest()
	swaps, paid, err := r.swapPass()
	if err != nil {
		return nil, cost{}, err
	}
	moves := 0
	if paid {
		if moves, err = r.movePass(); err != nil {
			return nil, cost{}, err
		}
	}
	if swaps+moves > 0 {
		clusters = r.clusters()
	}
	return clusters, r.total, nil
}

// swapPass visits every user u in canonical order and exchanges it with a
// member v of one of u's move targets b when the four steps together (u
// leaves its cluster a and joins b, v leaves b and joins a) lower
// s + λ·c; of the pairs it tries (weighSwaps) it takes the lowest. Swaps
// keep every cluster's size, so they reach the users of clusters of
// exactly k members, which single moves cannot take out: after split
// most users are in such clusters. It returns the number of swaps, and
// whether the pass went past its probe (see swapProbe).
func (r *refiner) swapPass() (swaps int, paid bool, err error) {
	pr := r.pr
	mem := r.members()
	ex := &expendables{r: r, mem: mem, list: make([][]int32, len(mem))}
	par.For(r.w, len(mem), 256, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			ex.find(int32(c))
		}
	})
	start := r.total
	// Every swapProbe-th point first, then the others unless those did
	// not pay.
	for phase := range 2 {
		if phase == 1 && !r.swapsPay(start) {
			return swaps, false, nil
		}
		r.findMissing(func(p int32) bool { return inPhase(p, phase) })
		for lo := int32(0); lo < int32(pr.np); lo += swapBlockPoints {
			if r.s.ctx.Err() != nil {
				return 0, false, r.s.ctx.Err()
			}
			swaps += r.swapBlock(lo, min(lo+swapBlockPoints, int32(pr.np)), phase, ex)
		}
	}
	return swaps, true, nil
}

// inPhase reports whether a swap pass visits point p in phase 0 (the
// probe) or 1 (the others).
func inPhase(p int32, phase int) bool { return (p%swapProbe == 0) == (phase == 0) }

// findMissing finds, in parallel, the nearest centres of the points p
// with in(p) that findNearest left unsearched (a swap tries every user,
// a move only those of clusters above k).
func (r *refiner) findMissing(in func(p int32) bool) {
	par.For(r.w, r.pr.np, 1024, func(worker, lo, hi int) {
		cs := r.scratch(worker)
		for p := int32(lo); p < int32(hi); p++ {
			if top := r.candidates(p); top[0] == notFound && in(p) {
				cs.nearest(r.pr.row(p), r.cpost, r.clen, top)
			}
		}
	})
}

// swapsPay reports whether the swaps of the probe (every swapProbe-th
// point), which took the cost from start to r.total, scaled to all
// points, raise the Jaccard J by at least swapMinGain of itself, and by
// something. To first order a change (Δs, Δc) raises J by
// −(Δs + J·Δc) / (E + c), that is by −(Δs + J·Δc) / (E − s) of itself.
// The test is linear: scaling Δ itself by swapProbe and computing J again
// could take s or c below zero.
func (r *refiner) swapsPay(start cost) bool {
	e := float64(r.pr.entries)
	j := (e - float64(start.s)) / (e + float64(start.c))
	d := r.total.minus(start)
	gain := -(float64(d.s) + j*float64(d.c)) * swapProbe
	return gain > 0 && gain >= swapMinGain*(e-float64(start.s))
}

// expendables holds, per cluster, up to swapExpendable members in
// ascending order of the change of s + λ·c their leaving alone makes.
type expendables struct {
	r    *refiner
	mem  [][]int32 // cluster -> members
	list [][]int32 // cluster -> its expendable members
}

// find fills cluster c's list from its members. It only reads the
// clusters, so clusters may be searched in parallel.
func (e *expendables) find(c int32) {
	r := e.r
	var top [swapExpendable]struct {
		v int64
		u int32
	}
	n := 0
	for _, u := range e.mem[c] {
		v := r.lam.of(r.st[c].deltaOut(r.pr.urow(u), r.mode))
		if n == swapExpendable && v >= top[n-1].v {
			continue
		}
		i := min(n, swapExpendable-1)
		n = min(n+1, swapExpendable)
		for ; i > 0 && top[i-1].v > v; i-- {
			top[i] = top[i-1]
		}
		top[i].v, top[i].u = v, u
	}
	e.list[c] = e.list[c][:0]
	for _, t := range top[:n] {
		e.list[c] = append(e.list[c], t.u)
	}
}

// left updates cluster c's list after its member u left it (and another
// user joined).
func (e *expendables) left(c, u int32) {
	if e.r.st[c].s <= swapRefindSize {
		e.find(c)
		return
	}
	e.list[c] = slices.DeleteFunc(e.list[c], func(w int32) bool { return w == u })
	if len(e.list[c]) == 0 {
		e.find(c)
	}
}
