package solver

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"unsafe"

	"github.com/smoothanon/smoothanon/solver/internal/knn"
	"github.com/smoothanon/smoothanon/solver/internal/par"
	"github.com/smoothanon/smoothanon/solver/internal/prefetch"
)

// facSet is a set of facilities (each at a point) with exact nearest-open
// queries through an inverted index over the facilities' features.
// Facilities are numbered in opening order; ties in distance go to the lower
// number, i.e. the earliest opened facility. This tie rule matters: on dblp,
// users sharing no feature with any facility all tie, and sending them to the
// earliest facility gathers them in one cluster that split then cuts into
// similar groups; breaking ties by lowest row instead (knn.Facilities'
// default) scatters them and lowers the improved smooth Jaccard markedly
// (see docs/decisions/016-meyerson-facility-sets.md). So when Meyerson
// runs on knn.Facilities (large power-law inputs, see knnFacilitiesLoad)
// the rows are ranked by processing order.
type facSet struct {
	pr     *problem
	point  []int32 // facility -> point
	closed []bool  // facility -> closed
	// post lists, per dense feature, the facilities holding it in buckets
	// of one degree (ascending), each bucket in increasing number; plen is
	// the total per feature.
	post  [][]bucket
	plen  []int32
	seen  []uint32 // facility -> stamp of the last query that evaluated it
	mark  []uint32 // dense feature -> stamp of the last query holding it
	stamp uint32
	minD  int32 // least degree of a facility with features, or -1
	// seg is a segment tree of (degree<<32 | facility) minima over
	// facility numbers, leaves from segN on, for the facilities sharing no
	// feature with a query (distance deg p + deg f): a minimum over [t,
	// len) costs O(log facilities), not O(facilities).
	seg  []uint64
	segN int
	// byDeg lists facilities by (degree, number) for queries after
	// closing starts; lo skips closed ones.
	byDeg []int32
	lo    int
	// With an exact KNearest graph of the users (nb; a bounded one is
	// not used, as fromNeighbours needs every nearer user listed), at
	// maps a point to its facility (-1 when none; a point holds at most
	// one facility, as every later user of it joins at distance 0).
	nb *knn.Graph
	at []int32
}

func newFacSet(pr *problem, nb *knn.Graph) *facSet {
	fs := &facSet{pr: pr, minD: -1}
	if pr.bits == nil {
		pr.buildRare()
	}
	if nb != nil && nb.Exact && nb.K > 0 && len(nb.Idx) == pr.n*nb.K {
		fs.nb = nb
		fs.at = make([]int32, pr.np)
		for i := range fs.at {
			fs.at[i] = -1
		}
	}
	if pr.bits == nil {
		fs.post = make([][]bucket, pr.nf)
		fs.plen = make([]int32, pr.nf)
		fs.mark = make([]uint32, pr.nf)
	}
	return fs
}

func (fs *facSet) len() int { return len(fs.point) }

func (fs *facSet) add(p int32) int32 {
	id := int32(len(fs.point))
	fs.point = append(fs.point, p)
	fs.closed = append(fs.closed, false)
	fs.seen = append(fs.seen, 0)
	if fs.at != nil {
		fs.at[p] = id
	}
	if fs.pr.bits != nil {
		return id // queries scan bitsets
	}
	d := fs.pr.deg(p)
	for _, f := range fs.pr.row(p) {
		bs := fs.post[f]
		i := sort.Search(len(bs), func(i int) bool { return bs[i].deg >= d })
		if i == len(bs) || bs[i].deg != d {
			bs = slices.Insert(bs, i, bucket{deg: d})
			fs.post[f] = bs
		}
		bs[i].ids = append(bs[i].ids, id)
		fs.plen[f]++
	}
	if d > 0 && (fs.minD < 0 || d < fs.minD) {
		fs.minD = d
	}
	if int(id) >= fs.segN {
		fs.growSeg()
	}
	i := fs.segN + int(id)
	fs.seg[i] = uint64(d)<<32 | uint64(id)
	for i >>= 1; i > 0; i >>= 1 {
		fs.seg[i] = min(fs.seg[2*i], fs.seg[2*i+1])
	}
	return id
}

// growSeg doubles the leaves of the segment tree.
func (fs *facSet) growSeg() {
	n := max(2*fs.segN, 64)
	seg := make([]uint64, 2*n)
	for i := range seg {
		seg[i] = ^uint64(0)
	}
	copy(seg[n:], fs.seg[fs.segN:])
	for i := n - 1; i > 0; i-- {
		seg[i] = min(seg[2*i], seg[2*i+1])
	}
	fs.seg, fs.segN = seg, n
}

// minDegFrom is the least (degree, number) key of the facilities numbered
// ≥ t, or ^0 when there is none.
func (fs *facSet) minDegFrom(t int32) uint64 {
	best := ^uint64(0)
	lo, hi := fs.segN+int(t), fs.segN+len(fs.point)
	for lo < hi {
		if lo&1 == 1 {
			best = min(best, fs.seg[lo])
			lo++
		}
		if hi&1 == 1 {
			hi--
			best = min(best, fs.seg[hi])
		}
		lo >>= 1
		hi >>= 1
	}
	return best
}

// better orders candidates by (distance, facility).
func better(d, f, bd, bf int32) bool {
	return bf < 0 || d < bd || (d == bd && f < bf)
}

// fromNeighbours answers a nearest-open-facility query for point p from
// the neighbour list of p's first user, when it can: every user nearer
// than the list's last distance is listed (all of them when the list holds
// every other user), so the least (distance, number) open facility at a
// listed point below that distance is the exact answer. ok is false when
// there is none.
func (fs *facSet) fromNeighbours(p int32) (g, d int32, ok bool) {
	if fs.nb == nil {
		return -1, 0, false
	}
	pr, K := fs.pr, fs.nb.K
	idx, dist := fs.nb.Row(int(pr.users(p)[0]))
	all := K == pr.n-1
	last := dist[K-1]
	bf, bd := int32(-1), int32(0)
	for i, v := range idx {
		dv := dist[i]
		if dv >= last && !all {
			break // lists ascend by distance
		}
		h := fs.at[pr.userPoint[v]]
		if h >= 0 && !fs.closed[h] && better(dv, h, bd, bf) {
			bf, bd = h, dv
		}
	}
	return bf, bd, bf >= 0
}

// nearestFrom returns the nearest facility numbered ≥ t (all open; used
// while only adding), or -1.
func (fs *facSet) nearestFrom(p int32, t int32) (int32, int32) {
	pr := fs.pr
	if pr.bits != nil {
		return fs.scan(p, t)
	}
	dp := pr.deg(p)
	// Facilities sharing nothing: minimum degree over [t, len). The least
	// one, at distance at most dp+md, also bounds the search.
	key := fs.minDegFrom(t)
	if key == ^uint64(0) {
		return -1, 0
	}
	mf, md := int32(uint32(key)), int32(key>>32)
	bf, bd := fs.sharing(p, t, mf, dp+md)
	return bf, bd
}

// bucket is the facilities of one degree holding a feature.
type bucket struct {
	deg int32
	ids []int32
}

// sharing returns the better of (bf, bd) and the nearest open facility
// numbered ≥ t among those sharing a feature with p, exactly under the
// (distance, number) order, but without reading facilities that cannot
// beat the best found so far: the features of p are read rarest first; a
// facility of degree dg first met in the list of the i-th of them shares at
// most dp−i features with p, so it is at distance at least dp+dg−2(dp−i),
// and each list is read only in the degree buckets where that bound is at
// most the best distance so far (every facility it skips is farther than
// an answer already found). Once no degree qualifies, the remaining lists
// are not read at all. Facilities sharing nothing are the caller's.
func (fs *facSet) sharing(p, t, bf, bd int32) (int32, int32) {
	// Any fixed order of p's features keeps this exact (a facility
	// sharing c features holds one of any dp−c+1 of them); the rarest
	// first make the lists read before the bound tightens short.
	pr := fs.pr
	row := pr.row(p)
	dp := int32(len(row))
	if dp == 0 || fs.minD < 0 {
		return bf, bd
	}
	fs.stamp++
	if fs.stamp == 0 {
		clear(fs.seen)
		clear(fs.mark)
		fs.stamp = 1
	}
	st := fs.stamp
	for _, f := range row {
		fs.mark[f] = st
	}
	ord := fs.pr.rareRow(p)
	const inf = int32(1) << 30
	D := inf
	if bf >= 0 {
		D = bd
	}
	for i, f := range ord {
		rest := dp - int32(i) // most features a facility first met here shares
		// Distance ≥ dp+dg−2·rest and ≥ dg−dp (and ≥ dp−dg), so only
		// degrees in [dp−D, D−dp+2·rest] can reach D.
		hi := D - dp + 2*rest
		if D == inf {
			hi = inf
		}
		if hi < fs.minD {
			break // no facility met from here on can reach D
		}
		lo := dp - D
		for bi := range fs.post[f] {
			b := &fs.post[f][bi]
			if b.deg > hi {
				break
			}
			if b.deg < lo {
				continue
			}
			ids := b.ids
			if t > 0 {
				ids = ids[sort.Search(len(ids), func(i int) bool { return ids[i] >= t }):]
			}
			for _, g := range ids {
				if fs.seen[g] == st || fs.closed[g] {
					continue
				}
				fs.seen[g] = st
				c := int32(0)
				for _, h := range pr.row(fs.point[g]) {
					if fs.mark[h] == st {
						c++
					}
				}
				if d := dp + b.deg - 2*c; better(d, g, bd, bf) {
					bf, bd = g, d
					if d < D {
						D = d
						hi = D - dp + 2*rest
						lo = dp - D
					}
				}
			}
		}
	}
	return bf, bd
}

// scan is the brute-force nearest open facility numbered ≥ t, by bitsets.
func (fs *facSet) scan(p int32, t int32) (int32, int32) {
	pr := fs.pr
	bp := pr.bitsOf(p)
	bf, bd := int32(-1), int32(0)
	for g := t; g < int32(len(fs.point)); g++ {
		if fs.closed[g] {
			continue
		}
		if d := hamming(bp, pr.bitsOf(fs.point[g])); bf < 0 || d < bd {
			bf, bd = g, d
		}
	}
	return bf, bd
}

// startClosing prepares nearestOpen queries.
func (fs *facSet) startClosing() {
	fs.byDeg = make([]int32, len(fs.point))
	for i := range fs.byDeg {
		fs.byDeg[i] = int32(i)
	}
	sort.SliceStable(fs.byDeg, func(a, b int) bool {
		return fs.pr.deg(fs.point[fs.byDeg[a]]) < fs.pr.deg(fs.point[fs.byDeg[b]])
	})
}

func (fs *facSet) close(g int32) {
	fs.closed[g] = true
	for fs.lo < len(fs.byDeg) && fs.closed[fs.byDeg[fs.lo]] {
		fs.lo++
	}
}

// nearestOpenPoint returns the nearest open facility to point p, or -1.
func (fs *facSet) nearestOpenPoint(p int32) (int32, int32) {
	pr := fs.pr
	if g, d, ok := fs.fromNeighbours(p); ok {
		return g, d
	}
	if pr.bits != nil {
		return fs.scan(p, 0)
	}
	dp := pr.deg(p)
	// The open facility of least degree (ties: lowest number) bounds every
	// facility sharing nothing with p, and the search.
	if fs.lo >= len(fs.byDeg) {
		return -1, 0
	}
	// byDeg is stable, so this is the lowest-numbered open facility of
	// least degree.
	g := fs.byDeg[fs.lo]
	bf, bd := fs.sharing(p, 0, g, dp+pr.deg(fs.point[g]))
	return bf, bd
}

// closer is what closeSmall needs from a restart's facilities, numbered
// 0..count()−1 in opening order. Ties in nearestOpen go to the lowest
// number.
type closer interface {
	count() int
	isClosed(g int32) bool
	close(g int32)
	nearestOpen(u int32) int32 // for canonical user u
	startClosing()
}

func (fs *facSet) count() int            { return len(fs.point) }
func (fs *facSet) isClosed(g int32) bool { return fs.closed[g] }
func (fs *facSet) nearestOpen(u int32) int32 {
	g, _ := fs.nearestOpenPoint(fs.pr.userPoint[u])
	return g
}

// run is one Meyerson pass.
type run struct {
	fs     closer
	assign []int32 // canonical user -> facility number
	cost   float64
	index  int
}

// restarts is Meyerson's phase of one solve: the opening costs, and the
// knn index and neighbour graph it searches, which live only as long as
// it does.
type restarts struct {
	s    *state
	cost []float64 // opening cost of each point
	// graph is the knn.KNearest graph of the input, or nil; it lets both
	// facility sets answer some nearest-facility queries from the
	// neighbour lists (same answers).
	graph *knn.Graph
	ix    *knn.Index
	// knn runs the restarts on knn.Facilities instead of facSet (same
	// result, different speed: docs/decisions/016).
	knn bool
	// facBase is the empty knn.Facilities index over ix (knnIndex).
	facBase *knn.Facilities
	facOnce sync.Once
}

// best runs Restarts random orders (in parallel, each with its own
// generator seeded by (Seed, restart)) and keeps the cheapest, ties going to
// the lowest restart.
func (m *restarts) best() (*run, error) {
	s := m.s
	R := s.p.Restarts
	w := min(par.Workers(s.p.Workers), R)
	var mu sync.Mutex
	var best *run
	done := 0
	var wg sync.WaitGroup
	next := make(chan int, R)
	for r := 0; r < R; r++ {
		next <- r
	}
	close(next)
	s.progress("restarts", 0, R)
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				if s.ctx.Err() != nil {
					return
				}
				var ru *run
				if m.knn {
					ru = m.onKNN(r)
				} else {
					ru = m.onFacSet(r)
				}
				mu.Lock()
				if best == nil || ru.cost < best.cost || (ru.cost == best.cost && ru.index < best.index) {
					best = ru
				}
				done++
				s.progress("restarts", done, R)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	s.progress("restarts", R, R)
	return best, nil
}

// opens is Meyerson's decision for a point at distance d from the nearest
// open facility (found is false when none is open) whose own opening cost
// is f: open with probability min(1, d/f). It draws from rng only when the
// outcome is random, so every caller consumes the stream alike.
func opens(rng *rand.Rand, found bool, d int32, f float64) bool {
	switch {
	case !found:
		return true
	case d == 0:
		return false // distance 0 joins, even when f is 0 (0/0)
	case f == 0:
		return true // min(1, d/0) = 1
	}
	return rng.Float64()*f < float64(d)
}

// restartOrder is restart r's random stream and its processing order of the
// n points (the stream continues to drive the opening decisions).
func restartOrder(seed int64, r int, n int) (*rand.Rand, []int32) {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(r)+0x9e3779b97f4a7c15))
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return rng, order
}

// onFacSet is restart r on facSet.
func (m *restarts) onFacSet(r int) *run {
	s, cost := m.s, m.cost
	pr := s.pr
	rng, order := restartOrder(s.p.Seed, r, pr.n)
	fs := newFacSet(pr, m.graph)
	// Per point: nearest facility among those numbered < upto.
	cf := make([]int32, pr.np)
	cd := make([]int32, pr.np)
	upto := make([]int32, pr.np)
	for i := range cf {
		cf[i] = -1
	}
	ru := &run{fs: fs, assign: make([]int32, pr.n), index: r}
	for i, u := range order {
		// Hint the memory of the users ahead, in dependent stages as in
		// onKNN: on inputs larger than the CPU caches the
		// restart's loads would otherwise miss one after the other.
		if q := hintAhead(pr, order, i, cost, ru.assign); q >= 0 {
			prefetch.Line(unsafe.Pointer(&upto[q]))
			prefetch.Line(unsafe.Pointer(&cf[q]))
			prefetch.Line(unsafe.Pointer(&cd[q]))
			prefetch.Line(unsafe.Pointer(&pr.off[q]))
		}
		if j := i + aheadRow; j < len(order) {
			q := pr.userPoint[order[j]]
			if lo, hi := pr.off[q], pr.off[q+1]; lo < hi {
				prefetch.Line(unsafe.Pointer(&pr.feat[lo]))
				prefetch.Line(unsafe.Pointer(&pr.feat[hi-1]))
				if pr.rare != nil {
					prefetch.Line(unsafe.Pointer(&pr.rare[lo]))
					prefetch.Line(unsafe.Pointer(&pr.rare[hi-1]))
				}
			}
		}
		p := pr.userPoint[u]
		n := int32(fs.len())
		if upto[p] < n {
			g, d := fs.nearestFrom(p, upto[p])
			if g >= 0 && better(d, g, cd[p], cf[p]) {
				cf[p], cd[p] = g, d
			}
			upto[p] = n
		}
		g, d := cf[p], cd[p]
		open := opens(rng, g >= 0, d, cost[p])
		if open {
			g = fs.add(p)
			ru.cost += cost[p]
			cf[p], cd[p], upto[p] = g, 0, g+1
		} else {
			ru.cost += float64(d)
		}
		ru.assign[u] = g
	}
	return ru
}

// smallHeap orders facilities by (clients, number).
type smallHeap struct {
	g, size []int32
}

func (h *smallHeap) Len() int { return len(h.g) }
func (h *smallHeap) Less(i, j int) bool {
	return h.size[i] < h.size[j] || (h.size[i] == h.size[j] && h.g[i] < h.g[j])
}
func (h *smallHeap) Swap(i, j int) {
	h.g[i], h.g[j] = h.g[j], h.g[i]
	h.size[i], h.size[j] = h.size[j], h.size[i]
}
func (h *smallHeap) Push(x any) {
	e := x.([2]int32)
	h.g = append(h.g, e[0])
	h.size = append(h.size, e[1])
}
func (h *smallHeap) Pop() any {
	n := len(h.g) - 1
	e := [2]int32{h.g[n], h.size[n]}
	h.g, h.size = h.g[:n], h.size[:n]
	return e
}

// closeSmall closes facilities with fewer than k clients, fewest clients
// first (ties: lowest facility number), moving each client to the nearest
// open facility, until every open facility has at least k clients. It
// returns the clusters (canonical users, increasing).
func (s *state) closeSmall(ru *run) [][]int32 {
	pr, fs, k := s.pr, ru.fs, int32(s.p.K)
	F := fs.count()
	members := make([][]int32, F)
	for u, g := range ru.assign {
		members[g] = append(members[g], int32(u))
	}
	fs.startClosing()
	h := &smallHeap{}
	for g := 0; g < F; g++ {
		if sz := int32(len(members[g])); sz < k {
			heap.Push(h, [2]int32{int32(g), sz})
		}
	}
	open := F
	total := h.Len()
	s.progress("close", 0, total)
	target := make(map[int32]int32) // point -> facility, per closing
	for h.Len() > 0 {
		e := heap.Pop(h).([2]int32)
		g := e[0]
		sz := int32(len(members[g]))
		if fs.isClosed(g) || sz >= k {
			continue
		}
		if sz != e[1] {
			heap.Push(h, [2]int32{g, sz})
			continue
		}
		if open == 1 {
			break // cannot happen when k <= rows
		}
		fs.close(g)
		open--
		clear(target)
		for _, u := range members[g] {
			p := pr.userPoint[u]
			t, ok := target[p]
			if !ok {
				t = fs.nearestOpen(u)
				target[p] = t
			}
			members[t] = append(members[t], u)
		}
		members[g] = nil
	}
	s.progress("close", total, total)
	var out [][]int32
	for g := 0; g < F; g++ {
		if !fs.isClosed(int32(g)) && len(members[g]) > 0 {
			slices.Sort(members[g])
			out = append(out, members[g])
		}
	}
	return out
}
