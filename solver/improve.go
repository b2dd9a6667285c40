package solver

import (
	"fmt"
	"slices"
	"sync"

	"github.com/smoothanon/smoothanon/internal/mondrian"
	"github.com/smoothanon/smoothanon/solver/internal/par"
	"github.com/smoothanon/smoothanon/verify"
)

// improve refines three candidate clusterings and keeps the cheapest under
// the mode (ties: the earlier candidate):
//
//  1. the clusters as they are;
//  2. the clusters after split (splitting lowers the cost of each large
//     cluster at once but can trap refine in a worse local optimum, e.g. on
//     block-structured data, so the choice is made on the final cost);
//  3. the Mondrian partition of the rows (internal/mondrian) after split:
//     groups cut on shared features, which the Hamming facility costs miss
//     on power-law lists (1e5 generated user lists, smooth: 0.337 Jaccard
//     against 0.263 from the clusters).
//
// Candidates are computed concurrently unless Workers is 1; none modifies
// the clusters.
func (s *state) improve(clusters [][]int32) ([][]int32, error) {
	// Candidates in tie order. Each is mostly a sequential local search,
	// so all run at once unless Workers is 1: run two at a time on two
	// cores, the last one ran alone for seconds with a core idle (1e6
	// user lists: improve 14.6 -> 13.5 s wall, one run each). Each
	// candidate reports its split and refine progress under its own stage
	// names (see Params.Progress), as they run at the same time.
	cands := []func(tag string) ([][]int32, error){
		func(tag string) ([][]int32, error) { return s.refine(clusters, tag) },
		func(tag string) ([][]int32, error) {
			split := s.split(clusters, tag)
			if len(split) == len(clusters) {
				return nil, nil // the same as candidate 1
			}
			return s.refine(split, tag)
		},
		func(tag string) ([][]int32, error) {
			part, common, _, err := mondrian.Partition(s.ctx, s.canon, s.p.K)
			if err != nil {
				return nil, err
			}
			mc := make([][]int32, len(common))
			for u, c := range part {
				mc[c] = append(mc[c], int32(u))
			}
			return s.refine(s.split(mc, tag), tag)
		},
	}
	out := make([][][]int32, len(cands))
	errs := make([]error, len(cands))
	costs := make([]int64, len(cands))
	run := func(i int) {
		out[i], errs[i] = cands[i](fmt.Sprintf(" (candidate %d/%d)", i+1, len(cands)))
		if errs[i] == nil && out[i] != nil {
			costs[i] = s.totalCost(out[i])
		}
	}
	if par.Workers(s.p.Workers) == 1 {
		for i := range cands {
			run(i)
		}
	} else {
		var wg sync.WaitGroup
		for i := range cands {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(i)
			}()
		}
		wg.Wait()
	}
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	var best [][]int32
	var bestCost int64
	for i, c := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if c == nil {
			continue
		}
		if best == nil || costs[i] < bestCost {
			best, bestCost = c, costs[i]
		}
	}
	return best, nil
}

// totalCost is the number of changed entries of a clustering. Clusters are
// costed in parallel: the last candidate's cost is computed alone at the
// end of improve, with a core otherwise idle.
func (s *state) totalCost(clusters [][]int32) int64 {
	w := par.Workers(s.p.Workers)
	type scratch struct {
		cnt, touched []int32
		c            int64
	}
	sc := make([]scratch, w)
	par.For(w, len(clusters), 1024, func(worker, lo, hi int) {
		x := &sc[worker]
		if x.cnt == nil {
			x.cnt = make([]int32, s.pr.nf)
		}
		var c int64
		for _, mem := range clusters[lo:hi] {
			c += s.pr.costOf(mem, s.p.Mode, x.cnt, &x.touched)
		}
		x.c += c
	})
	var c int64
	for i := range sc {
		c += sc[i].c
	}
	return c
}

// split partitions every cluster of at least 2k users into groups of
// mutually close users (see partition; in nonsmooth mode also into groups
// sharing features, and the cheaper of the two is taken) and keeps the
// partition where it lowers the cluster's cost under the mode. Clusters
// are independent, so they are split in parallel; the output keeps the
// input order.
func (s *state) split(clusters [][]int32, tag string) [][]int32 {
	pr, k := s.pr, s.p.K
	w := par.Workers(s.p.Workers)
	type scratch struct {
		sp      *splitter
		cnt     []int32
		touched []int32
	}
	scr := make([]*scratch, w)
	parts := make([][][]int32, len(clusters)) // nil: keep the cluster
	var mu sync.Mutex
	done := 0
	s.progress("split"+tag, 0, len(clusters))
	par.For(w, len(clusters), 256, func(worker, lo, hi int) {
		if s.ctx.Err() != nil {
			return
		}
		sc := scr[worker]
		if sc == nil {
			sc = &scratch{sp: newSplitter(pr), cnt: make([]int32, pr.nf)}
			scr[worker] = sc
		}
		for i := lo; i < hi; i++ {
			c := clusters[i]
			if len(c) < 2*k {
				continue
			}
			best := pr.costOf(c, s.p.Mode, sc.cnt, &sc.touched)
			commons := []bool{false}
			if s.p.Mode == verify.NonSmooth {
				commons = append(commons, true)
			}
			for _, groups := range sc.sp.partitions(c, k, s.p.Mode, commons...) {
				var after int64
				for _, g := range groups {
					after += pr.costOf(g, s.p.Mode, sc.cnt, &sc.touched)
				}
				if after < best {
					best, parts[i] = after, groups
				}
			}
		}
		mu.Lock()
		done += hi - lo
		s.progress("split"+tag, done, len(clusters))
		mu.Unlock()
	})
	if s.ctx.Err() != nil {
		return clusters
	}
	var out [][]int32
	for i, c := range clusters {
		if parts[i] != nil {
			out = append(out, parts[i]...)
		} else {
			out = append(out, c)
		}
	}
	return out
}

// splitter holds scratch space for partition.
type splitter struct {
	pr    *problem
	lpost [][]int32 // dense feature -> local indices of members holding it
	mark  []bool    // dense feature -> in the centre
	cnt   []int32
}

func newSplitter(pr *problem) *splitter {
	return &splitter{pr: pr, lpost: make([][]int32, pr.nf), mark: make([]bool, pr.nf)}
}

// partitions cuts members (≥ 2k users) into groups of k users and a last
// group of k..2k−1: repeatedly the remaining user farthest from the
// cluster's centre (under mode) takes k−1 remaining users: its k−1 nearest
// (exact Hamming distance; ties by canonical order), or with common the
// ones chosen by commonPick. Common suits nonsmooth mode: there a group
// keeps only the features all its users hold, so its cost is the sum of
// the degrees minus size × |intersection|, and the degrees sum to the same
// total whatever the groups, so only the intersections matter; nearest
// users by Hamming distance are mostly users of low degree that share
// nothing. partitions cuts once for each value of commons, in that order;
// the cuts share one setup (the members' local feature lists, and the
// members ordered by distance from the centre and by degree).
func (sp *splitter) partitions(members []int32, k int, mode verify.Mode, commons ...bool) [][][]int32 {
	pr := sp.pr
	n := len(members)
	// Centre.
	hold := make(map[int32]int32)
	for _, u := range members {
		for _, f := range pr.urow(u) {
			hold[f]++
		}
	}
	clen := int32(0)
	for f, h := range hold {
		if keep(h, int32(n), mode) {
			sp.mark[f] = true
			clen++
		}
	}
	cdist := make([]int32, n)
	for i, u := range members {
		row := pr.urow(u)
		common := int32(0)
		for _, f := range row {
			if sp.mark[f] {
				common++
			}
			sp.lpost[f] = append(sp.lpost[f], int32(i))
		}
		cdist[i] = int32(len(row)) + clen - 2*common
	}
	for f := range hold {
		sp.mark[f] = false
	}
	seeds := make([]int32, n)
	byDeg := make([]int32, n)
	for i := range seeds {
		seeds[i] = int32(i)
		byDeg[i] = int32(i)
	}
	slices.SortStableFunc(seeds, func(a, b int32) int { return int(cdist[b] - cdist[a]) })
	deg := func(i int32) int32 { return int32(len(pr.urow(members[i]))) }
	slices.SortStableFunc(byDeg, func(a, b int32) int { return int(deg(a) - deg(b)) })
	out := make([][][]int32, len(commons))
	for i, common := range commons {
		out[i] = sp.cut(members, k, common, seeds, byDeg)
	}
	for f := range hold {
		sp.lpost[f] = sp.lpost[f][:0]
	}
	return out
}

// cut is one partition of members over partitions' setup (sp.lpost
// filled, seeds by distance from the centre, farthest first, byDeg by
// degree).
func (sp *splitter) cut(members []int32, k int, common bool, seeds, byDeg []int32) [][]int32 {
	pr := sp.pr
	n := len(members)
	deg := func(i int32) int32 { return int32(len(pr.urow(members[i]))) }
	if cap(sp.cnt) < n {
		sp.cnt = make([]int32, n)
	}
	cnt := sp.cnt[:n]
	removed := make([]bool, n)
	left := n
	si, bi := 0, 0
	var groups [][]int32
	var cands []distID
	var touched []int32
	for left >= 2*k {
		for removed[seeds[si]] {
			si++
		}
		seed := seeds[si]
		removed[seed] = true
		left--
		for bi < n && removed[byDeg[bi]] {
			bi++
		}
		g := []int32{members[seed]}
		if common {
			g = sp.commonPick(members, seed, k, removed, byDeg[bi:], g)
		} else {
			// The k−1 nearest by (distance, index), kept sorted: most
			// candidates do not enter, and sorting them all took 2.3 of
			// 47 CPU-s on 1e6 user lists.
			cands = cands[:0]
			ds := deg(seed)
			touched = sp.countShared(pr.urow(members[seed]), n, removed, cnt, touched)
			for _, j := range touched {
				cands = offerTop(cands, k-1, distID{ds + deg(j) - 2*cnt[j], j})
			}
			// Nearest users sharing nothing: least degree.
			got := 0
			for x := bi; x < n && got < k-1; x++ {
				j := byDeg[x]
				if removed[j] || cnt[j] > 0 {
					continue
				}
				cands = offerTop(cands, k-1, distID{ds + deg(j), j})
				got++
			}
			for _, j := range touched {
				cnt[j] = 0
			}
			touched = touched[:0]
			for _, c := range cands {
				removed[c.i] = true
				g = append(g, members[c.i])
			}
		}
		left -= k - 1
		slices.Sort(g)
		groups = append(groups, g)
	}
	var last []int32
	for i := range members {
		if !removed[i] {
			last = append(last, members[i])
		}
	}
	return append(groups, last)
}

// tooCommon reports whether feature f is held by so many of a cluster of
// n members that counting its holders is skipped: lists longer than
// refineMaxList in clusters above 2·refineMaxList members. Such features
// cannot tell users apart, and skipping them keeps large splits linear.
func (sp *splitter) tooCommon(f int32, n int) bool {
	return len(sp.lpost[f]) > refineMaxList && n > 2*refineMaxList
}

// countShared adds to cnt, for every member not removed, how many of feats
// it holds (features that are tooCommon excepted), appending the members
// it counts first to touched, which it returns.
func (sp *splitter) countShared(feats []int32, n int, removed []bool, cnt []int32, touched []int32) []int32 {
	for _, f := range feats {
		if sp.tooCommon(f, n) {
			continue
		}
		for _, j := range sp.lpost[f] {
			if removed[j] {
				continue
			}
			if cnt[j] == 0 {
				touched = append(touched, j)
			}
			cnt[j]++
		}
	}
	return touched
}

// commonPick adds k−1 remaining members to the group g of the seed (local
// index seed) for nonsmooth mode, marking them removed, and returns the
// group. Each step adds the remaining member holding most of the
// features the group still has in common (ties: lower degree, then lower
// index), which then shrink to those it holds too (and to those enough
// remaining members hold to last until the group is full). Features too
// common to count (see countShared) are not counted; when only they are
// left, the next member is the first remaining one by degree that holds
// all of them, else the one holding most. Once no remaining member holds
// any of them (or none are left), the rest come from byDeg (local indices
// by ascending degree): the group keeps nothing more, and low-degree
// members are the least useful to later groups.
func (sp *splitter) commonPick(members []int32, seed int32, k int, removed []bool, byDeg []int32, g []int32) []int32 {
	pr := sp.pr
	n := len(members)
	common := slices.Clone(pr.urow(members[seed]))
	cnt := sp.cnt[:n]
	var touched []int32
	deg := func(i int32) int { return len(pr.urow(members[i])) }
	for len(g) < k {
		// Count, per remaining member, the features of common it holds,
		// in one pass that also drops the features held by fewer remaining
		// members than the group still needs (they cannot stay in its
		// intersection; their counts are taken back).
		kept := common[:0]
		for _, f := range common {
			if sp.tooCommon(f, n) {
				kept = append(kept, f) // not counted (see countShared)
				continue
			}
			h := 0
			for _, j := range sp.lpost[f] {
				if !removed[j] {
					if cnt[j] == 0 {
						touched = append(touched, j)
					}
					cnt[j]++
					h++
				}
			}
			if h >= k-len(g) {
				kept = append(kept, f)
				continue
			}
			for _, j := range sp.lpost[f] {
				if !removed[j] {
					cnt[j]--
				}
			}
		}
		common = kept
		best := int32(-1)
		for _, j := range touched {
			if cnt[j] > 0 && (best < 0 || cnt[j] > cnt[best] || (cnt[j] == cnt[best] && (deg(j) < deg(best) || (deg(j) == deg(best) && j < best)))) {
				best = j
			}
		}
		for _, j := range touched {
			cnt[j] = 0
		}
		touched = touched[:0]
		if best < 0 && len(common) > 0 {
			// Only features too common to count are left: the first
			// remaining member by degree holding all of them, else the one
			// holding most.
			bestHeld := 0
			for _, j := range byDeg {
				if removed[j] {
					continue
				}
				held := 0
				for _, f := range common {
					if _, ok := slices.BinarySearch(pr.urow(members[j]), f); ok {
						held++
					}
				}
				if held > bestHeld {
					best, bestHeld = j, held
					if held == len(common) {
						break
					}
				}
			}
		}
		if best < 0 {
			break
		}
		removed[best] = true
		g = append(g, members[best])
		row := pr.urow(members[best])
		common = slices.DeleteFunc(common, func(f int32) bool {
			_, found := slices.BinarySearch(row, f)
			return !found
		})
	}
	for _, j := range byDeg {
		if len(g) == k {
			break
		}
		if !removed[j] {
			removed[j] = true
			g = append(g, members[j])
		}
	}
	return g
}

// cstat is a cluster's feature counts for cost deltas.
//
// The deltas of adding or removing a member depend, feature by feature of
// the member's row, only on whether 2h > s, 2h = s or 2h < s (smooth) or on
// whether h = s or h = s−1 (nonsmooth): a feature held by fewer than half
// of the cluster counts as if absent. So the deltas read hv, which holds
// only the features with at least hmin holders, where hmin ≤ ⌈s/2⌉ at all
// times: a few features, in a few cache lines, where h holds every feature
// of the cluster. On 1e6 user lists the clusters' h no longer fit the CPU
// caches, and the deltas' lookups in them were the largest part of
// refine's moves (deltaIn 7.2 -> 3.0 CPU-s in a profile of one solve).
type cstat struct {
	s   int32
	h   fmap    // dense feature -> holders
	hv  fmap    // the features with at least hmin holders -> holders
	byH []int32 // byH[h] = features with h holders (h ≥ 1)
	// hmin is hv's threshold, within heavyBounds(s) (0 while newCstat adds
	// the members: hv not kept).
	hmin int32
	// M = #{f: 2h > s} and W = #{f: 2h ≥ s}, kept up to date by bump and
	// resize. #{h = s} and #{h = s−1} are read from byH.
	M, W int32
}

// newCstat returns the counts of a cluster of members. hv is built once at
// the end (hmin = 0 while adding: hv not kept).
func newCstat(pr *problem, members []int32) cstat {
	c := cstat{byH: make([]int32, 2)}
	for _, u := range members {
		c.add(pr.urow(u))
	}
	c.reindex()
	return c
}

// heavyBounds is the range that hv's threshold may take at size s before
// hv is rebuilt, and the threshold a rebuild sets. A margin below ⌈s/2⌉
// lets a cluster shrink by a few members between rebuilds, and a rebuild
// on growth keeps hv small; both cost a scan of h, at most once per about
// s/8 size changes.
func heavyBounds(s int32) (lo, hi, set int32) {
	half := (s + 1) / 2
	slack := max(1, s/16)
	return max(1, half-3*slack), max(1, half), max(1, half-slack)
}

func (c *cstat) at(h int32) int32 {
	if h < 1 || int(h) >= len(c.byH) {
		return 0
	}
	return c.byH[h]
}

// bump changes the holders of f by d (±1) at the current size.
func (c *cstat) bump(f int32, d int32) {
	h := c.h.get(f)
	if h > 0 {
		c.byH[h]--
		if 2*h > c.s {
			c.M--
		}
		if 2*h >= c.s {
			c.W--
		}
	}
	h += d
	if h > 0 {
		c.h.set(f, h)
		for int(h) >= len(c.byH) {
			c.byH = append(c.byH, 0)
		}
		c.byH[h]++
		if 2*h > c.s {
			c.M++
		}
		if 2*h >= c.s {
			c.W++
		}
	} else {
		c.h.del(f)
	}
	if c.hmin == 0 {
		return
	}
	if h >= c.hmin {
		c.hv.set(f, h)
	} else if h+1 == c.hmin && d < 0 {
		c.hv.del(f)
	}
}

// resize changes the size by d (±1), keeping M and W right, and rebuilds
// hv when its threshold leaves heavyBounds.
func (c *cstat) resize(d int32) {
	s := c.s
	if d > 0 {
		if (s+1)%2 == 0 {
			c.M -= c.at((s + 1) / 2)
		}
		if s%2 == 0 {
			c.W -= c.at(s / 2)
		}
	} else {
		if s%2 == 0 {
			c.M += c.at(s / 2)
		}
		if (s-1)%2 == 0 {
			c.W += c.at((s - 1) / 2)
		}
	}
	c.s += d
	if lo, hi, _ := heavyBounds(c.s); c.hmin != 0 && (c.hmin < lo || c.hmin > hi) {
		c.reindex()
	}
}

// reindex rebuilds hv at the threshold heavyBounds sets for the size.
func (c *cstat) reindex() {
	_, _, set := heavyBounds(c.s)
	c.hmin = set
	n := 0
	for h := int(set); h < len(c.byH); h++ {
		n += int(c.byH[h])
	}
	c.hv.reset(n)
	c.h.each(func(f, h int32) {
		if h >= set {
			c.hv.set(f, h)
		}
	})
}

// add adds a member with row.
func (c *cstat) add(row []int32) {
	for _, f := range row {
		c.bump(f, 1)
	}
	c.resize(1)
}

// remove removes a member with row.
func (c *cstat) remove(row []int32) {
	for _, f := range row {
		c.bump(f, -1)
	}
	c.resize(-1)
}

// deltaIn is the cost change of adding a user with row to c.
func (c *cstat) deltaIn(row []int32, mode verify.Mode) int64 {
	s := c.s
	if mode == verify.NonSmooth {
		a := int64(0)
		for _, f := range row {
			if c.hv.get(f) == s {
				a++
			}
		}
		return int64(len(row)) - int64(s+1)*a + int64(s)*int64(c.at(s))
	}
	d := int64(c.M)
	for _, f := range row {
		h := c.hv.get(f)
		d += int64(min(h+1, s-h) - min(h, s-h))
		if 2*h > s {
			d--
		}
	}
	return d
}

// deltaOut is the cost change of removing a member with row from c.
func (c *cstat) deltaOut(row []int32, mode verify.Mode) int64 {
	s := c.s
	if mode == verify.NonSmooth {
		n1 := int64(c.at(s - 1))
		for _, f := range row {
			if c.hv.get(f) == s-1 {
				n1--
			}
		}
		a := int64(c.at(s))
		return -int64(len(row)) - int64(s-1)*(a+n1) + int64(s)*a
	}
	d := -int64(c.W)
	for _, f := range row {
		h := c.hv.get(f)
		d += int64(min(h-1, s-h) - min(h, s-h))
		if 2*h >= s {
			d++
		}
	}
	return d
}

// maxRefinePasses bounds the local search.
const maxRefinePasses = 12

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

// centreScratch is one worker's scratch space for nearest.
type centreScratch struct {
	cnt     []int32 // cluster -> features of the row in its list
	touched []int32
	top     []distID
}

// distID is a candidate (a user, a cluster) at distance d, ordered by
// (d, i).
type distID struct{ d, i int32 }

func (a distID) less(b distID) bool { return a.d < b.d || a.d == b.d && a.i < b.i }

// offerTop adds x to top, the n smallest distinct candidates offered so
// far in ascending order, and returns it.
func offerTop(top []distID, n int, x distID) []distID {
	m := len(top)
	if m == n && (n == 0 || !x.less(top[m-1])) {
		return top
	}
	if m < n {
		top = append(top, x)
	} else {
		m--
	}
	for m > 0 && x.less(top[m-1]) {
		top[m] = top[m-1]
		m--
	}
	top[m] = x
	return top
}

// nearest writes into out (-1 padded) the clusters whose centre, as
// indexed by cpost (features a new member could keep) and clen (centre
// sizes), is nearest to row, by (distance, cluster); features whose list
// is longer than refineMaxList are not counted.
func (cs *centreScratch) nearest(row []int32, cpost [][]int32, clen []int32, out []int32) {
	cnt, touched, top := cs.cnt, cs.touched[:0], cs.top[:0]
	dp := int32(len(row))
	for _, f := range row {
		if len(cpost[f]) > refineMaxList {
			continue
		}
		for _, c := range cpost[f] {
			if cnt[c] == 0 {
				touched = append(touched, c)
			}
			cnt[c]++
		}
	}
	n := len(out)
	for _, c := range touched {
		x := distID{dp + clen[c] - 2*cnt[c], c}
		cnt[c] = 0
		// Most are rejected: test that here, without the call (measured
		// 16% of refine on one core when left to offerTop).
		if len(top) == n && !x.less(top[n-1]) {
			continue
		}
		top = offerTop(top, n, x)
	}
	for i := range out {
		out[i] = -1
		if i < len(top) {
			out[i] = top[i].i
		}
	}
	cs.touched, cs.top = touched, top
}

// refine moves single users to the cluster whose (current) centre is among
// the nearest to them when the move lowers the total cost and leaves the
// source cluster with at least k users. Passes over all users in canonical
// order repeat until no move helps.
func (s *state) refine(clusters [][]int32, tag string) ([][]int32, error) {
	pr, k, mode := s.pr, int32(s.p.K), s.p.Mode
	nc := len(clusters)
	cl := make([]int32, pr.n)
	st := make([]cstat, nc)
	w := par.Workers(s.p.Workers)
	par.For(w, nc, 256, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			st[c] = newCstat(pr, clusters[c])
			for _, u := range clusters[c] {
				cl[u] = int32(c)
			}
		}
	})
	cpost := make([][]int32, pr.nf)
	clen := make([]int32, nc)
	cscr := make([]*centreScratch, w)
	cands := make([]int32, pr.np*refineCandidates)
	var tried []int32
	for pass := 0; pass < maxRefinePasses; pass++ {
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
		s.progress("refine"+tag, pass, maxRefinePasses)
		for f := range cpost {
			cpost[f] = cpost[f][:0]
		}
		// Index the features a member's move could keep: those in the centre
		// after adding one more holder.
		for c := range st {
			clen[c] = 0
			sz := st[c].s
			st[c].h.each(func(f, h int32) {
				if keep(h, sz, mode) {
					clen[c]++
				}
				if keep(h+1, sz+1, mode) {
					cpost[f] = append(cpost[f], int32(c))
				}
			})
		}
		// The nearest centres of every point depend only on this pass's
		// index, so they are found first, in parallel, for the points with
		// a user that may leave its cluster (one of more than k users);
		// the others (most points once clusters are split) are marked
		// and, should a user of theirs become free to move during the
		// pass, found then.
		scratch := func(worker int) *centreScratch {
			if cscr[worker] == nil {
				cscr[worker] = &centreScratch{cnt: make([]int32, nc)}
			}
			return cscr[worker]
		}
		par.For(w, pr.np, 1024, func(worker, lo, hi int) {
			cs := scratch(worker)
		points:
			for p := lo; p < hi; p++ {
				top := cands[p*refineCandidates : (p+1)*refineCandidates]
				for _, u := range pr.users(int32(p)) {
					if st[cl[u]].s > k {
						cs.nearest(pr.row(int32(p)), cpost, clen, top)
						continue points
					}
				}
				top[0] = notFound
			}
		})
		moves := 0
		for p := int32(0); p < int32(pr.np); p++ {
			if p&1023 == 0 && s.ctx.Err() != nil {
				return nil, s.ctx.Err() // a pass takes seconds at 1e6 rows
			}
			row := pr.row(p)
			top := cands[int(p)*refineCandidates : int(p+1)*refineCandidates]
			for _, u := range pr.users(p) {
				a := cl[u]
				if st[a].s <= k {
					continue
				}
				if top[0] == notFound {
					scratch(0).nearest(row, cpost, clen, top)
				}
				out := st[a].deltaOut(row, mode)
				best, bestD := int32(-1), int64(0)
				try := func(c int32) {
					if c == a {
						return
					}
					if d := out + st[c].deltaIn(row, mode); d < bestD || (d == bestD && best >= 0 && c < best) {
						best, bestD = c, d
					}
				}
				tried = tried[:0]
				consider := func(c int32) {
					if !slices.Contains(tried, c) {
						tried = append(tried, c)
						try(c)
					}
				}
				for _, c := range top {
					if c < 0 {
						break
					}
					consider(c)
				}
				// Clusters of identical users and of the nearest points.
				for _, v := range pr.users(p)[:min(len(pr.users(p)), 8)] {
					consider(cl[v])
				}
				for _, q := range pr.neighbours(p) {
					if q < 0 {
						break
					}
					for _, v := range pr.users(q)[:min(len(pr.users(q)), 4)] {
						consider(cl[v])
					}
				}
				if best < 0 {
					continue
				}
				moves++
				st[a].remove(row)
				st[best].add(row)
				cl[u] = best
			}
		}
		// Stop when a pass moved fewer than 0.1% of the users: later passes
		// cost a full scan each for a negligible gain.
		if moves == 0 || int64(moves)*1000 < int64(pr.n) {
			break
		}
	}
	s.progress("refine"+tag, maxRefinePasses, maxRefinePasses)
	out := make([][]int32, nc)
	for u := int32(0); u < int32(pr.n); u++ {
		out[cl[u]] = append(out[cl[u]], u)
	}
	res := out[:0]
	for _, mem := range out {
		if len(mem) > 0 {
			res = append(res, mem)
		}
	}
	return res, nil
}
