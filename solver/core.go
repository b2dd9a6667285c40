package solver

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/smoothanon/smoothanon/lsh"
)

// Core groups are improve's fourth candidate, for short rows such as
// one-hot tables (adult: 8 features per row, one per attribute). A group
// is a set of rows that share a core, a subset of each one's features;
// released, it keeps the core and drops (in smooth mode: mostly) the rest,
// so a row pays about the number of its features outside the core. This
// is full-domain suppression per group: the shape of the best releases of
// tabular data, which neither Hamming-nearest facilities nor Mondrian's
// cuts aim at.
//
// coreGroups builds them bottom-up: at level d = 0, 1, 2, … every point
// not yet grouped offers each subset of its features missing d of them as
// a core; the cores held by at least k users are taken heaviest first,
// each with the points that hold it and are still free. Level 0 groups
// identical rows, level 1 rows that differ in one feature, and so on.

// coreMaxDeg is the longest row for which improve builds core groups: a
// level enumerates up to C(deg, d) cores per point, 12,870 at 16 features.
const coreMaxDeg = 16

// coreBudget bounds the cores one level may enumerate, per point of the
// problem, and coreMaxOffers in all: the levels stop at the first that
// would exceed either, and the points still free form one group (which
// split then cuts). A core offered costs 16 bytes while its level is
// sorted, so a level holds at most 64 MB. On adult (8 features, 256
// subsets per row in all; 154,000 cores at its largest level) and
// playstore (10 features; 940,000) every level fits.
const (
	coreBudget    = 256
	coreMaxOffers = 1 << 22
)

// coreGroups returns the core groups of the problem's users for clusters
// of at least k users: every user in exactly one group and, when the
// problem has at least k users, every group of at least k users (the
// points left free at the end form one more group, or join the last one
// when they hold fewer than k users). Every point must have at most
// coreMaxDeg features. The result depends only on the problem.
func (pr *problem) coreGroups(k int32) [][]int32 {
	free := make([]int32, pr.np)
	for p := range free {
		free[p] = int32(p)
	}
	limit := min(int64(coreBudget)*int64(pr.np), coreMaxOffers)
	var groups [][]int32
	for d := 0; len(free) > 0 && d <= int(pr.maxDeg); d++ {
		if pr.coreCount(free, d) > limit {
			break
		}
		groups, free = pr.takeCores(free, d, k, groups)
	}
	if len(free) > 0 {
		var rest []int32
		for _, p := range free {
			rest = append(rest, pr.users(p)...)
		}
		if len(groups) == 0 || len(rest) >= int(k) {
			groups = append(groups, rest)
		} else {
			groups[len(groups)-1] = append(groups[len(groups)-1], rest...)
		}
	}
	return groups
}

// coreCount is the number of cores the points pts offer at level d.
func (pr *problem) coreCount(pts []int32, d int) int64 {
	var n int64
	for _, p := range pts {
		l := int(pr.deg(p))
		n += binomial(l, l-min(d, l))
	}
	return n
}

// binomial is C(n, r) for 0 ≤ r ≤ n ≤ 32.
func binomial(n, r int) int64 {
	c := int64(1)
	for i := 1; i <= r; i++ {
		c = c * int64(n-r+i) / int64(i)
	}
	return c
}

// offer is a core offered by a point at a level: its hash and the point.
type offer struct {
	h uint64
	p int32
}

// heavyCore is one core held by at least k users: offers[lo:hi] of its
// level, sorted by point, w users.
type heavyCore struct{ lo, hi, w int32 }

// takeCores groups the points free at level d (see coreGroups), appends
// the groups to groups and returns them with the points still free (in
// ascending order). The cores held by at least k users are taken
// heaviest first, each when its points still free hold k users or more.
func (pr *problem) takeCores(free []int32, d int, k int32, groups [][]int32) ([][]int32, []int32) {
	offers, heavy := pr.heavyCores(free, d, k)
	taken := make([]bool, pr.np)
	for _, c := range heavy {
		var w int32
		for _, o := range offers[c.lo:c.hi] {
			if !taken[o.p] {
				w += pr.w[o.p]
			}
		}
		if w < k {
			continue
		}
		var g []int32
		for _, o := range offers[c.lo:c.hi] {
			if !taken[o.p] {
				taken[o.p] = true
				g = append(g, pr.users(o.p)...)
			}
		}
		groups = append(groups, g)
	}
	rest := free[:0]
	for _, p := range free {
		if !taken[p] {
			rest = append(rest, p)
		}
	}
	return groups, rest
}

// heavyCores returns every (core, point) pair that the points free offer
// at level d, sorted by core and point with repeats dropped, and the cores
// that at least k users hold, in descending order of users (ties: the
// lower first point, then the lower hash). Cores are told apart by a
// 64-bit hash: two that collide make one candidate group, which costs
// quality, never validity (a point is listed once per core).
//
// Sorting the pairs is faster than a hash table of counts, whose probes
// miss the cache on large levels (see docs/decisions/017-core-groups.md).
func (pr *problem) heavyCores(free []int32, d int, k int32) ([]offer, []heavyCore) {
	offers := make([]offer, 0, pr.coreCount(free, d))
	pr.eachCore(free, d, func(p int32, h uint64) { offers = append(offers, offer{h, p}) })
	slices.SortFunc(offers, func(a, b offer) int {
		if a.h != b.h {
			return cmp.Compare(a.h, b.h)
		}
		return cmp.Compare(a.p, b.p)
	})
	offers = slices.Compact(offers) // a core listed twice by one point: only if hashes collide
	var heavy []heavyCore
	for i := 0; i < len(offers); {
		j, w := i, int32(0)
		for ; j < len(offers) && offers[j].h == offers[i].h; j++ {
			w += pr.w[offers[j].p]
		}
		if w >= k {
			heavy = append(heavy, heavyCore{int32(i), int32(j), w})
		}
		i = j
	}
	slices.SortFunc(heavy, func(a, b heavyCore) int {
		if a.w != b.w {
			return cmp.Compare(b.w, a.w)
		}
		if pa, pb := offers[a.lo].p, offers[b.lo].p; pa != pb {
			return cmp.Compare(pa, pb)
		}
		return cmp.Compare(a.lo, b.lo) // lo is in hash order
	})
	return offers, heavy
}

// eachCore calls fn with every point of pts and the hash of every core it
// offers at level d, points in order, cores in ascending order of masks.
func (pr *problem) eachCore(pts []int32, d int, fn func(p int32, h uint64)) {
	for _, p := range pts {
		row := pr.row(p)
		eachSubset(len(row), len(row)-min(d, len(row)), func(mask uint32) {
			fn(p, coreHash(row, mask))
		})
	}
}

// eachSubset calls fn with every r-bit subset of n bits (n ≤ 32), in
// ascending order of the masks (Gosper's successor).
func eachSubset(n, r int, fn func(mask uint32)) {
	if r == 0 {
		fn(0)
		return
	}
	end := uint64(1) << n
	for m := uint64(1)<<r - 1; m < end; {
		fn(uint32(m))
		low := m & -m
		up := m + low
		m = up | ((m^up)>>2)/low
	}
}

// coreHash is hashCore; tests replace it to force collisions.
var coreHash = hashCore

// hashCore hashes the features of row selected by mask, and their number.
func hashCore(row []int32, mask uint32) uint64 {
	h := uint64(14695981039346656037) ^ uint64(bits.OnesCount32(mask))
	for m := mask; m != 0; m &= m - 1 {
		h ^= uint64(row[bits.TrailingZeros32(m)]) + 0x9e3779b97f4a7c15
		h *= 1099511628211
		h ^= h >> 29
	}
	return lsh.Mix64(h) // every bit of the last feature reaches every bit
}
