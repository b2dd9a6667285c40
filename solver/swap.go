package solver

import (
	"slices"

	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// swapExpendable is the number of members of a cluster that a swap tries
// to send away for a user joining it: those whose departure alone lowers
// the cluster's s + λ·c most. Trying every member instead gained 0.16
// Jaccard points on dblp (four passes each; adult and the SBM: nothing)
// in 30 times the time.
const swapExpendable = 4

// swapRefindSize is the largest cluster whose expendable members are
// found again after every swap that changes it. A larger cluster only
// drops the member that left (one member more or less barely moves the
// others' departures) and is searched again when its list runs out.
const swapRefindSize = 32

// swapPass visits every user u in canonical order and exchanges it with a
// member v of one of u's move targets b when the four steps together (u
// leaves its cluster a and joins b, v leaves b and joins a) lower
// s + λ·c; of the pairs it tries (bestSwap) it takes the lowest. Swaps
// keep every cluster's size, so they reach the users of clusters of
// exactly k members, which single moves cannot take out: after split
// most users are in such clusters. It returns the number of swaps.
func (r *refiner) swapPass() (int, error) {
	pr := r.pr
	mem := r.members()
	ex := &expendables{r: r, mem: mem, list: make([][]int32, len(mem))}
	par.For(r.w, len(mem), 256, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			ex.find(int32(c))
		}
	})
	swaps := 0
	for p := int32(0); p < int32(pr.np); p++ {
		if p&1023 == 0 && r.s.ctx.Err() != nil {
			return 0, r.s.ctx.Err()
		}
		row := pr.row(p)
		top := r.candidates(p)
		for _, u := range pr.users(p) {
			a := r.cl[u]
			b, v, d := r.bestSwap(p, a, row, top, ex.list)
			if b < 0 {
				continue
			}
			vrow := pr.urow(v)
			r.st[a].remove(row)
			r.st[b].add(row)
			r.st[b].remove(vrow)
			r.st[a].add(vrow)
			r.cl[u], r.cl[v] = b, a
			mem[a][slices.Index(mem[a], u)] = v
			mem[b][slices.Index(mem[b], v)] = u
			r.total = r.total.add(d)
			r.reweigh()
			ex.left(a, u)
			ex.left(b, v)
			swaps++
		}
	}
	return swaps, nil
}

// bestSwap returns, for a user of point p (row) in cluster a, the target b
// and the member v of b (from exp[b]) whose swap lowers s + λ·c most, and
// the swap's change of cost; b = -1 when no swap lowers it (ties: the
// first found). Each delta is exact: it is taken on the clusters as the
// swap's previous steps leave them. The clusters are as before on return.
func (r *refiner) bestSwap(p, a int32, row, top []int32, exp [][]int32) (b, v int32, d cost) {
	out := r.st[a].deltaOut(row, r.mode)
	r.st[a].remove(row)
	b, v = -1, -1
	var bestV int64
	r.eachTarget(p, a, top, func(c int32) {
		in := out.add(r.st[c].deltaIn(row, r.mode))
		r.st[c].add(row)
		for _, w := range exp[c] {
			wrow := r.pr.urow(w)
			x := in.add(r.st[c].deltaOut(wrow, r.mode)).add(r.st[a].deltaIn(wrow, r.mode))
			if val := r.lam.of(x); val < bestV {
				b, v, d, bestV = c, w, x, val
			}
		}
		r.st[c].remove(row)
	})
	r.st[a].add(row)
	return b, v, d
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
	if e.list[c] = slices.DeleteFunc(e.list[c], func(w int32) bool { return w == u }); len(e.list[c]) == 0 {
		e.find(c)
	}
}
