package solver

import (
	"cmp"
	"math/bits"
	"slices"
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
// problem; the levels stop at the first that would exceed it, and the
// points still free form one group (which split then cuts). On adult
// (8 features, 256 subsets per row in all) and playstore (10 features)
// every level fits.
const coreBudget = 256

// coreGroups returns the core groups of the problem's users for clusters
// of at least k users: every user in exactly one group, every group of at
// least k users (the points left free at the end form one more group, or
// join the last one when they hold fewer than k users). Every point must
// have at most coreMaxDeg features. The result depends only on the
// problem.
func (pr *problem) coreGroups(k int32) [][]int32 {
	free := make([]int32, pr.np)
	for p := range free {
		free[p] = int32(p)
	}
	var groups [][]int32
	for d := 0; len(free) > 0 && d <= int(pr.maxDeg); d++ {
		if pr.coreCount(free, d) > int64(coreBudget)*int64(pr.np) {
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

// binomial is C(n, r) for 0 ≤ r ≤ n ≤ 62.
func binomial(n, r int) int64 {
	c := int64(1)
	for i := 1; i <= r; i++ {
		c = c * int64(n-r+i) / int64(i)
	}
	return c
}

// takeCores groups the points free at level d (see coreGroups), appends
// the groups to groups and returns them with the points still free (in
// ascending order). The cores held by at least k users are taken
// heaviest first, each when its points still free hold k users or more.
func (pr *problem) takeCores(free []int32, d int, k int32, groups [][]int32) ([][]int32, []int32) {
	taken := make([]bool, pr.np)
	for _, pts := range pr.heavyCores(free, d, k) {
		pts = slices.DeleteFunc(pts, func(p int32) bool { return taken[p] })
		if pr.weight(pts) < k {
			continue
		}
		var g []int32
		for _, p := range pts {
			taken[p] = true
			g = append(g, pr.users(p)...)
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

// heavyCores returns the points (ascending) of every core that the points
// free offer at level d and that at least k users hold, in descending
// order of users (ties: the lower first point, then the lower hash).
// Cores are told apart by a 64-bit hash: two that collide make one
// candidate group, which costs quality, never validity (a point is listed
// once per core).
func (pr *problem) heavyCores(free []int32, d int, k int32) [][]int32 {
	// Every (core, point) pair, sorted: a core's points are consecutive.
	// Sorting beat a hash table of counts by 1.6× on playstore, whose
	// table probes missed the cache.
	type offer struct {
		h uint64
		p int32
	}
	offers := make([]offer, 0, pr.coreCount(free, d))
	pr.eachCore(free, d, func(p int32, h uint64) { offers = append(offers, offer{h, p}) })
	slices.SortFunc(offers, func(a, b offer) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.p, b.p)) })
	var cores [][]int32
	var ws []int32
	for i := 0; i < len(offers); {
		j, w := i, int32(0)
		for ; j < len(offers) && offers[j].h == offers[i].h; j++ {
			if j == i || offers[j].p != offers[j-1].p {
				w += pr.w[offers[j].p]
			}
		}
		if w >= k {
			var pts []int32
			for _, o := range offers[i:j] {
				if len(pts) == 0 || pts[len(pts)-1] != o.p {
					pts = append(pts, o.p)
				}
			}
			cores, ws = append(cores, pts), append(ws, w)
		}
		i = j
	}
	order := make([]int, len(cores))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(ws[b], ws[a]), cmp.Compare(cores[a][0], cores[b][0]), cmp.Compare(a, b))
	})
	sorted := make([][]int32, len(order))
	for i, c := range order {
		sorted[i] = cores[c]
	}
	return sorted
}

// weight is the number of users of the points pts.
func (pr *problem) weight(pts []int32) int32 {
	var w int32
	for _, p := range pts {
		w += pr.w[p]
	}
	return w
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
	// Murmur3's finalizer, so that sorted hashes spread evenly.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return max(h, 1) // never 0, the empty slot's key
}
