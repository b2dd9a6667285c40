package solver

import (
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// maxRefinePasses bounds the local search.
const maxRefinePasses = 12

// maxDissolvePasses bounds the dissolve passes of a refine call (see
// dissolvePass): one in smooth mode, three in non-smooth mode. In smooth
// mode a second and third pass, each after the moves the last one allowed,
// cost time and gained nothing measurable; in non-smooth mode, where a
// kept feature must be held by every member, they still empty clusters
// the moves could not (see docs/decisions/013-dissolve-passes.md).
func maxDissolvePasses(mode matrix.Mode) int {
	if mode == matrix.NonSmooth {
		return 3
	}
	return 1
}

// refineMaxList bounds the work per user of the candidate search: features
// that would stay in the centres of more than this many clusters are too
// common to tell clusters apart and are skipped (this keeps refine linear
// on power-law data, where a few features are held by most users).
const refineMaxList = 512

// refineCandidates is the number of nearest centres tried per user.
const refineCandidates = 6

// notFound marks a point's nearest centres as not yet searched in a
// refine pass (-1 pads a list shorter than refineCandidates).
const notFound = -2

// refine moves single users to the cluster whose (current) centre is among
// the nearest to them when the move lowers s + λ·c at λ = the current
// Jaccard (objective.go) and leaves the source cluster with at least k
// users. Passes over all users in canonical order repeat until no move
// helps; then a dissolve pass (maxDissolvePasses) tries to empty whole
// clusters (which single moves cannot do to a cluster of k), and the moves
// resume if that pass moved at least 0.1% of the users (the threshold of
// the move passes; fewer give the moves too little to work on to pay for a
// pass). It returns the clusters and the refiner that holds them, whose
// index and nearest centres swapRefine goes on from.
func (s *state) refine(clusters [][]int32, tag string) ([][]int32, *refiner, error) {
	r := s.newRefiner(clusters)
	dissolves := 0
	for pass := 0; pass < maxRefinePasses; pass++ {
		if err := s.ctx.Err(); err != nil {
			return nil, nil, err
		}
		s.progress("refine"+tag, pass, maxRefinePasses)
		r.indexCentres()
		r.findNearest()
		moves, err := r.movePass()
		if err != nil {
			return nil, nil, err
		}
		// Stop when a pass moved fewer than 0.1% of the users (later passes
		// cost a full scan each for a negligible gain), unless a dissolve
		// pass then moves at least as many.
		if few(moves, s.pr.n) {
			if dissolves == maxDissolvePasses(r.mode) {
				break
			}
			dissolves++
			r.indexCentres()
			r.findNearest()
			if few(r.dissolvePass(), s.pr.n) {
				break
			}
		}
	}
	s.progress("refine"+tag, maxRefinePasses, maxRefinePasses)
	return r.clusters(), r, nil
}

// few reports whether moves are fewer than 0.1% of n users (or none).
func few(moves, n int) bool { return moves == 0 || int64(moves)*1000 < int64(n) }

// refiner is the state of one refine call.
type refiner struct {
	s     *state
	pr    *problem
	k     int32
	mode  matrix.Mode
	w     int       // workers
	cl    []int32   // canonical user -> cluster
	st    []cstat   // cluster -> its feature counts
	cpost [][]int32 // dense feature -> clusters whose centre a new member holding it would keep it in
	clen  []int32   // cluster -> centre size
	// prevPost and prevLen are cpost and clen of the previous index
	// (indexed: there was one); its nearest centres stay right for the
	// points markStale leaves alone.
	prevPost [][]int32
	prevLen  []int32
	indexed  bool
	cscr     []*centreScratch // worker -> scratch for nearest
	// cands holds, per point, its refineCandidates nearest centres in
	// this pass's index (top[0] == notFound: not searched yet, or stale).
	cands []int32
	tried []int32 // clusters tried for the current user
	// swap holds swapBlock's per-worker scratch for the parallel weighing,
	// and one more (the last) for the weighing as the swaps are picked
	// (all of it with one worker, again where a cluster changed); mod is
	// the block in which each cluster last changed (see swapBlock).
	swap  []*swapScratch
	mod   []int32
	block int32
	// total is the cost of the current clustering and lam its λ (see
	// objective.go): every move lowers s + λ·c, and λ follows the
	// current Jaccard after every move.
	total cost
	lam   weight
}

// newRefiner counts the features of every cluster, in parallel.
func (s *state) newRefiner(clusters [][]int32) *refiner {
	pr := s.pr
	nc := len(clusters)
	r := &refiner{
		s: s, pr: pr, k: int32(s.p.K), mode: s.p.Mode, w: par.Workers(s.p.Workers),
		cl: make([]int32, pr.n), st: make([]cstat, nc),
		cpost: make([][]int32, pr.nf), clen: make([]int32, nc),
		cands: make([]int32, pr.np*refineCandidates),
	}
	r.cscr = make([]*centreScratch, r.w)
	costs := make([]cost, nc)
	par.For(r.w, nc, 256, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			st := newCstat(pr, clusters[c])
			r.st[c] = st
			for _, u := range clusters[c] {
				r.cl[u] = int32(c)
			}
			costs[c] = st.total(r.mode)
		}
	})
	for _, c := range costs {
		r.total = r.total.add(c)
	}
	r.reweigh()
	return r
}

// reweigh sets λ to the Jaccard of the current clustering.
func (r *refiner) reweigh() {
	r.lam = jaccardWeight(r.pr.entries, r.total)
}

// indexCentres indexes the features a member's move could keep: those in
// a cluster's centre after adding one more holder. The nearest centres
// found against the previous index are kept where markStale shows they
// cannot have changed (after a few moves, most points), and marked
// notFound elsewhere.
func (r *refiner) indexCentres() {
	if r.prevPost == nil {
		r.prevPost, r.prevLen = make([][]int32, len(r.cpost)), make([]int32, len(r.clen))
	}
	r.prevPost, r.cpost = r.cpost, r.prevPost
	copy(r.prevLen, r.clen)
	for f := range r.cpost {
		r.cpost[f] = r.cpost[f][:0]
	}
	for c := range r.st {
		r.clen[c] = 0
		sz := r.st[c].s
		r.st[c].h.each(func(f, h int32) {
			if keep(h, sz, r.mode) {
				r.clen[c]++
			}
			if keep(h+1, sz+1, r.mode) {
				r.cpost[f] = append(r.cpost[f], int32(c))
			}
		})
		if sens := r.st[c].sens; sens != nil {
			sens.h.each(func(f, h int32) {
				if shown(h, sz, sens.smin) {
					r.clen[c]++
				}
				if shown(h+1, sz+1, sens.smin) {
					r.cpost[f] = append(r.cpost[f], int32(c))
				}
			})
		}
	}
	if !r.indexed {
		for p := int32(0); p < int32(r.pr.np); p++ {
			r.candidates(p)[0] = notFound
		}
		r.indexed = true
		return
	}
	r.markStale()
}

// markStale marks notFound the nearest centres of the points that may
// have other nearest centres in this index than in the previous one. A
// point's distances (centreScratch.nearest) read the lists of its features
// no longer than refineMaxList and the centre sizes of the clusters on
// them, so its nearest centres stand unless one of its features has such
// a list, in either index, that changed or names a cluster whose centre
// size changed.
func (r *refiner) markStale() {
	pr := r.pr
	for f, cur := range r.cpost {
		old := r.prevPost[f]
		if len(old) > refineMaxList && len(cur) > refineMaxList {
			continue
		}
		if slices.Equal(old, cur) && !r.resized(cur) {
			continue
		}
		for _, p := range pr.post[pr.postOff[f]:pr.postOff[f+1]] {
			r.candidates(p)[0] = notFound
		}
	}
}

// resized reports whether the centre of one of clusters changed size
// since the previous index.
func (r *refiner) resized(clusters []int32) bool {
	for _, c := range clusters {
		if r.clen[c] != r.prevLen[c] {
			return true
		}
	}
	return false
}

// scratch returns worker's scratch space for nearest.
func (r *refiner) scratch(worker int) *centreScratch {
	if r.cscr[worker] == nil {
		r.cscr[worker] = &centreScratch{cnt: make([]int32, len(r.st))}
	}
	return r.cscr[worker]
}

// candidates is point p's slot in cands.
func (r *refiner) candidates(p int32) []int32 {
	return r.cands[int(p)*refineCandidates : int(p+1)*refineCandidates]
}

// findNearest finds the nearest centres, where indexCentres left them
// notFound, of every point with a user that may leave its cluster (one of
// more than k users). They depend only on this pass's index, so they are
// found first, in parallel; the other points (most once clusters are
// split) keep what indexCentres left (notFound or a list still right)
// and, should a user of theirs become free to move during the pass, are
// searched then if notFound.
func (r *refiner) findNearest() {
	pr := r.pr
	par.For(r.w, pr.np, 1024, func(worker, lo, hi int) {
		cs := r.scratch(worker)
		for p := int32(lo); p < int32(hi); p++ {
			top := r.candidates(p)
			if top[0] != notFound {
				continue
			}
			for _, u := range pr.users(p) {
				if r.st[r.cl[u]].s > r.k {
					cs.nearest(pr.row(p), r.cpost, r.clen, top)
					break
				}
			}
		}
	})
}

// movePass visits every user in canonical order and moves it where
// bestMove says, returning the number of moves.
func (r *refiner) movePass() (int, error) {
	pr := r.pr
	moves := 0
	for p := int32(0); p < int32(pr.np); p++ {
		if p&1023 == 0 && r.s.ctx.Err() != nil {
			return 0, r.s.ctx.Err() // a pass can be long on large inputs
		}
		row := pr.row(p)
		top := r.candidates(p)
		for _, u := range pr.users(p) {
			a := r.cl[u]
			if r.st[a].s <= r.k {
				continue
			}
			if top[0] == notFound {
				r.scratch(0).nearest(row, r.cpost, r.clen, top)
			}
			best, d := r.bestMove(p, a, row, top, false)
			if best < 0 {
				continue
			}
			moves++
			r.total = r.total.add(d)
			r.reweigh()
			r.st[a].remove(row)
			r.st[best].add(row)
			r.cl[u] = best
		}
	}
	return moves, nil
}

// bestMove returns the cluster that a user of point p (row) in cluster a
// lowers s + λ·c most by moving to, and the move's change of cost, or -1
// when no move lowers it; ties go to the lower cluster. It tries the
// nearest centres top, the clusters of the point's identical users and
// those of users of its nearest points.
func (r *refiner) bestMove(p, a int32, row, top []int32, force bool) (int32, cost) {
	out := r.st[a].deltaOut(row, r.mode)
	best, bestV, bestD := int32(-1), int64(0), cost{}
	r.eachTarget(p, a, top, &r.tried, func(c int32) {
		d := out.add(r.st[c].deltaIn(row, r.mode))
		if v := r.lam.of(d); (force && best < 0) || v < bestV || (v == bestV && best >= 0 && c < best) {
			best, bestV, bestD = c, v, d
		}
	})
	return best, bestD
}

// eachTarget calls try once for every non-empty cluster other than a that
// a user of point p may move to: the nearest centres top, the clusters of
// the point's identical users and those of users of its nearest points.
// It leaves those clusters in tried, in the order tried.
func (r *refiner) eachTarget(p, a int32, top []int32, tried *[]int32, try func(c int32)) {
	pr := r.pr
	*tried = (*tried)[:0]
	consider := func(c int32) {
		if c == a || r.st[c].s == 0 || slices.Contains(*tried, c) { // empty: dissolved
			return
		}
		*tried = append(*tried, c)
		try(c)
	}
	for _, c := range top {
		if c < 0 {
			break
		}
		consider(c)
	}
	for _, v := range pr.users(p)[:min(len(pr.users(p)), 8)] {
		consider(r.cl[v])
	}
	for _, q := range pr.neighbours(p) {
		if q < 0 {
			break
		}
		for _, v := range pr.users(q)[:min(len(pr.users(q)), 4)] {
			consider(r.cl[v])
		}
	}
}

// clusters returns the non-empty clusters, their members in canonical
// order.
func (r *refiner) clusters() [][]int32 {
	return slices.DeleteFunc(r.members(), func(mem []int32) bool { return len(mem) == 0 })
}

// members returns every cluster's members (none for an emptied one), in
// canonical order.
func (r *refiner) members() [][]int32 {
	mem := make([][]int32, len(r.st))
	for u, c := range r.cl {
		mem[c] = append(mem[c], int32(u))
	}
	return mem
}

// dissolvePass tries to empty every cluster in turn: its members leave one
// at a time, each to the cluster bestMove finds (even one that raises the
// cost), and the cluster stays dissolved when s + λ·c is lower in total,
// else every move is undone. It returns the number of moves it kept (the
// members of the clusters dissolved; a member of one dissolved later
// counts again), the measure the move passes' count is.
func (r *refiner) dissolvePass() int {
	pr := r.pr
	mem := r.members()
	type move struct{ u, to int32 }
	var done []move
	n := 0
	for a := range mem {
		if r.st[a].s == 0 {
			continue
		}
		if !r.mayDissolve(int32(a), mem[a]) {
			continue
		}
		done = done[:0]
		var total cost
		for _, u := range mem[a] {
			p := pr.userPoint[u]
			row := pr.row(p)
			top := r.candidates(p)
			if top[0] == notFound {
				r.scratch(0).nearest(row, r.cpost, r.clen, top)
			}
			best, d := r.bestMove(p, int32(a), row, top, true)
			if best < 0 {
				break
			}
			total = total.add(d)
			r.st[a].remove(row)
			r.st[best].add(row)
			r.cl[u] = best
			done = append(done, move{u, best})
		}
		if len(done) == len(mem[a]) && r.lam.of(total) < 0 {
			n += len(done)
			for _, m := range done {
				mem[m.to] = append(mem[m.to], m.u)
			}
			mem[a] = nil
			r.total = r.total.add(total)
			r.reweigh()
			continue
		}
		for i := len(done) - 1; i >= 0; i-- {
			row := pr.urow(done[i].u)
			r.st[done[i].to].remove(row)
			r.st[a].add(row)
			r.cl[done[i].u] = int32(a)
		}
	}
	return n
}

// mayDissolve screens cluster a (members mem) for dissolvePass without
// moving anyone: the cost of a, taken away, against each member's best
// deltaIn into another cluster as the clusters stand. Members that join
// the same cluster change each other's deltas, so this is an estimate;
// only clusters it finds worth dissolving are tried.
func (r *refiner) mayDissolve(a int32, mem []int32) bool {
	pr := r.pr
	st := &r.st[a]
	d := cost{}.minus(st.total(r.mode))
	for _, u := range mem {
		p := pr.userPoint[u]
		row := pr.row(p)
		top := r.candidates(p)
		if top[0] == notFound {
			r.scratch(0).nearest(row, r.cpost, r.clen, top)
		}
		c, in := r.bestIn(p, a, row, top)
		if c < 0 {
			return false
		}
		d = d.add(in)
	}
	return r.lam.of(d) < 0
}

// bestIn is bestMove's search without the source's delta: the cluster
// other than a that a user of point p (row) joins at the least s + λ·c,
// and the change, or -1.
func (r *refiner) bestIn(p, a int32, row, top []int32) (int32, cost) {
	best, bestV, bestD := int32(-1), int64(0), cost{}
	r.eachTarget(p, a, top, &r.tried, func(c int32) {
		d := r.st[c].deltaIn(row, r.mode)
		if v := r.lam.of(d); best < 0 || v < bestV || (v == bestV && c < best) {
			best, bestV, bestD = c, v, d
		}
	})
	return best, bestD
}
