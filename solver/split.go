package solver

import (
	"slices"
	"sync"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// split partitions every cluster of at least 2k users into groups of
// mutually close users (see partitions; in nonsmooth mode also into groups
// sharing features, and the cheaper of the two is taken) and keeps the
// partition where it lowers the cluster's cost under the mode. Clusters
// are independent, so they are split in parallel; the output keeps the
// input order.
func (s *state) split(clusters [][]int32, tag string) [][]int32 {
	pr, k := s.pr, s.p.K
	w := par.Workers(s.p.Workers)
	// A cut is kept where it lowers s + λ·c at λ = the input's Jaccard
	// (objective.go).
	lam := jaccardWeight(pr.entries, s.totalCost(clusters))
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
			best := lam.of(pr.costOf(c, s.p.Mode, sc.cnt, &sc.touched))
			commons := []bool{false}
			if s.p.Mode == matrix.NonSmooth {
				commons = append(commons, true)
			}
			for _, groups := range sc.sp.partitions(c, k, s.p.Mode, commons...) {
				var after cost
				for _, g := range groups {
					after = after.add(pr.costOf(g, s.p.Mode, sc.cnt, &sc.touched))
				}
				if v := lam.of(after); v < best {
					best, parts[i] = v, groups
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
func (sp *splitter) partitions(members []int32, k int, mode matrix.Mode, commons ...bool) [][][]int32 {
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
		if pr.keep(f, h, int32(n), mode) {
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
			// The k−1 nearest by (distance, index), kept sorted as they
			// are offered: most candidates do not enter, so this is
			// cheaper than sorting them all.
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
