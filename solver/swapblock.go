package solver

import (
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// swapBlockPoints is the number of points whose swaps are weighed at once.
const swapBlockPoints = 2048

// swapOption is one swap a user may make: with member v of cluster c, at
// change of cost d.
type swapOption struct {
	c, v int32
	d    cost
}

// swapScratch is one worker's buffers: the swaps weighed for the users of
// a block (only those that lower s + λ·c for some λ ≥ 0), and the
// targets each user's weighing tried, with where their swaps start.
type swapScratch struct {
	wg    swapWeigher
	tried []int32
	opts  []swapOption
	tgts  []swapTarget
}

// swapTarget is a cluster whose swaps a weighing tried; its options are
// opts[opt0:] up to the next target's opt0 (or the user's last).
type swapTarget struct{ c, opt0 int32 }

// swapPlan locates one user's weighing in the scratch of the worker that
// made it: its cluster a, targets tgts[t0:t1] and options opts[opt0:opt1].
type swapPlan struct {
	worker, a, t0, t1, opt0, opt1 int32
}

// swapBlock makes the swaps of the users of points [lo, hi) in phase, in
// canonical order, exactly as one user after the other would, and returns
// their number. With several workers the users' swaps are first weighed in
// parallel on the clusters as the block starts. Then, in order, each
// user's best swap is picked at the current λ from its weighed swaps,
// unless a swap made earlier in the block changed a cluster the weighing
// read: the user's own (all its swaps are weighed again) or a target
// (the targets are found again, as a user who changed cluster changed the
// one it left, and the changed ones, which include any new one, weighed
// again). A swap's change of cost does not depend on λ, so the picks are
// those of a serial pass.
func (r *refiner) swapBlock(lo, hi int32, phase int, ex *expendables) int {
	pr := r.pr
	if r.swap == nil {
		r.swap = make([]*swapScratch, r.w+1)
		for i := range r.swap {
			r.swap[i] = &swapScratch{}
		}
		r.mod = make([]int32, len(r.st))
	}
	base := pr.puOff[lo]
	var plans []swapPlan
	if r.w > 1 {
		plans = r.planSwaps(lo, hi, phase, ex)
	}
	r.block++
	swaps := 0
	for p := lo; p < hi; p++ {
		if !inPhase(p, phase) {
			continue
		}
		for i, u := range pr.users(p) {
			var opts []swapOption
			if plans != nil {
				opts = r.replan(p, u, plans[pr.puOff[p]+int32(i)-base], ex)
			} else {
				opts = r.weighNow(p, r.cl[u], ex, nil)
			}
			if r.pickSwap(u, opts, ex) {
				swaps++
			}
		}
	}
	for _, sc := range r.swap {
		sc.opts, sc.tgts = sc.opts[:0], sc.tgts[:0]
	}
	return swaps
}

// planSwaps weighs, in parallel, the swaps of the users of points [lo, hi)
// in phase on the clusters as they are, and returns where each user's are,
// indexed by the user's place in the block.
func (r *refiner) planSwaps(lo, hi int32, phase int, ex *expendables) []swapPlan {
	pr := r.pr
	base := pr.puOff[lo]
	plans := make([]swapPlan, pr.puOff[hi]-base)
	par.For(r.w, int(hi-lo), 64, func(worker, i0, i1 int) {
		sc := r.swap[worker]
		for p := lo + int32(i0); p < lo+int32(i1); p++ {
			if !inPhase(p, phase) {
				continue
			}
			for i, u := range pr.users(p) {
				pl := swapPlan{worker: int32(worker), a: r.cl[u], t0: int32(len(sc.tgts)), opt0: int32(len(sc.opts))}
				r.weighSwaps(p, pl.a, ex.list, sc, nil)
				pl.t1, pl.opt1 = int32(len(sc.tgts)), int32(len(sc.opts))
				plans[pr.puOff[p]+int32(i)-base] = pl
			}
		}
	})
	return plans
}

// replan returns the swaps of user u of point p that pl weighed, as a
// weighing now would find them: pl's own where none of the clusters it
// read changed in this block, else with the changed ones weighed again.
func (r *refiner) replan(p, u int32, pl swapPlan, ex *expendables) []swapOption {
	sc := r.swap[pl.worker]
	tgts := sc.tgts[pl.t0:pl.t1]
	fresh := r.mod[pl.a] != r.block
	for _, t := range tgts {
		if !fresh {
			break
		}
		fresh = r.mod[t.c] != r.block
	}
	if fresh {
		return sc.opts[pl.opt0:pl.opt1]
	}
	if r.mod[pl.a] == r.block {
		return r.weighNow(p, r.cl[u], ex, nil)
	}
	// The user's cluster is still pl.a: keep the swaps of its unchanged
	// targets. A target the weighing did not try is a changed one: it
	// became a target when a user that eachTarget reads swapped into it.
	return r.weighNow(p, pl.a, ex, func(c int32) ([]swapOption, bool) {
		if r.mod[c] == r.block {
			return nil, false
		}
		j := slices.IndexFunc(tgts, func(t swapTarget) bool { return t.c == c })
		if j < 0 { // cannot happen (see above); weighing is always right
			return nil, false
		}
		end := pl.opt1
		if j+1 < len(tgts) {
			end = tgts[j+1].opt0
		}
		return sc.opts[tgts[j].opt0:end], true
	})
}

// weighNow weighs the swaps of a user of point p in cluster a on the
// clusters as they are now, in the last scratch (see weighSwaps for kept).
func (r *refiner) weighNow(p, a int32, ex *expendables, kept func(c int32) ([]swapOption, bool)) []swapOption {
	own := r.swap[r.w]
	own.opts, own.tgts = own.opts[:0], own.tgts[:0]
	r.weighSwaps(p, a, ex.list, own, kept)
	return own.opts
}

// weighSwaps appends to sc.opts every swap of a user of point p in
// cluster a with a member of exp[c], for every target c, that lowers
// s + λ·c for some λ ≥ 0, in the order tried, and to sc.tgts the targets.
// It only reads the clusters. A target for which kept returns true takes
// the list kept returns instead of being weighed.
func (r *refiner) weighSwaps(p, a int32, exp [][]int32, sc *swapScratch, kept func(c int32) ([]swapOption, bool)) {
	row := r.pr.row(p)
	left := false
	r.eachTarget(p, a, r.candidates(p), &sc.tried, func(c int32) {
		sc.tgts = append(sc.tgts, swapTarget{c, int32(len(sc.opts))})
		if kept != nil {
			if o, ok := kept(c); ok {
				sc.opts = append(sc.opts, o...)
				return
			}
		}
		if !left {
			sc.wg.leave(&r.st[a], row, r.mode)
			left = true
		}
		sc.wg.join(&r.st[c])
		for _, v := range exp[c] {
			if d := sc.wg.swap(r.pr.urow(v)); d.s < 0 || d.c < 0 {
				sc.opts = append(sc.opts, swapOption{c, v, d})
			}
		}
	})
}

// pickSwap makes user u's swap of opts that lowers s + λ·c most at the
// current λ (ties: the first), if one lowers it, and reports whether it
// made one.
func (r *refiner) pickSwap(u int32, opts []swapOption, ex *expendables) bool {
	best, bestV := -1, int64(0)
	for i, o := range opts {
		if v := r.lam.of(o.d); v < bestV {
			best, bestV = i, v
		}
	}
	if best < 0 {
		return false
	}
	r.makeSwap(u, opts[best], ex)
	return true
}

// makeSwap exchanges user u with member o.v of cluster o.c, at change of
// cost o.d, and marks both clusters changed in this block.
func (r *refiner) makeSwap(u int32, o swapOption, ex *expendables) {
	a, b, v := r.cl[u], o.c, o.v
	row, vrow := r.pr.urow(u), r.pr.urow(v)
	r.st[a].remove(row)
	r.st[b].add(row)
	r.st[b].remove(vrow)
	r.st[a].add(vrow)
	r.cl[u], r.cl[v] = b, a
	ex.mem[a][slices.Index(ex.mem[a], u)] = v
	ex.mem[b][slices.Index(ex.mem[b], v)] = u
	r.total = r.total.add(o.d)
	r.reweigh()
	ex.left(a, u)
	ex.left(b, v)
	r.mod[a], r.mod[b] = r.block, r.block
}

// swapWeigher weighs the swaps of one user (row) of cluster a with the
// members of other clusters: the user joins cluster b and b's member
// joins a, each cluster keeping its size, so only the features of one
// row and not the other change their holders (cstat.deltaHolder). The
// changes of the user's own features are found once per cluster.
type swapWeigher struct {
	mode      matrix.Mode
	row       []int32
	a, b      *cstat
	out, in   []cost // per feature of row: its change leaving a, joining b
	outA, inB cost   // their sums
}

// leave sets the user's row and cluster a.
func (wg *swapWeigher) leave(a *cstat, row []int32, mode matrix.Mode) {
	wg.mode, wg.row, wg.a = mode, row, a
	wg.out, wg.outA = wg.out[:0], cost{}
	for _, f := range row {
		x := a.deltaHolder(f, -1, mode)
		wg.out = append(wg.out, x)
		wg.outA = wg.outA.add(x)
	}
}

// join sets the cluster b the user would join.
func (wg *swapWeigher) join(b *cstat) {
	wg.b = b
	wg.in, wg.inB = wg.in[:0], cost{}
	for _, f := range wg.row {
		x := b.deltaHolder(f, 1, wg.mode)
		wg.in = append(wg.in, x)
		wg.inB = wg.inB.add(x)
	}
}

// swap is the change of cost of exchanging the user with b's member of
// row vrow (sorted, like every row).
func (wg *swapWeigher) swap(vrow []int32) cost {
	d := wg.outA.add(wg.inB)
	row, i := wg.row, 0
	for _, f := range vrow {
		for i < len(row) && row[i] < f {
			i++
		}
		if i < len(row) && row[i] == f { // held by both: its holders stay
			d = d.minus(wg.out[i]).minus(wg.in[i])
			i++
			continue
		}
		d = d.add(wg.a.deltaHolder(f, 1, wg.mode)).add(wg.b.deltaHolder(f, -1, wg.mode))
	}
	return d
}
