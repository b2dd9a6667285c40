package solver

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/knn"
	"github.com/smoothanon/smoothanon/solver/internal/prefetch"
)

// problem is the input in canonical order, with identical rows merged into
// weighted points and feature ids renumbered densely (order preserved,
// except that sensitive features come after the others).
type problem struct {
	n, np, nf int
	entries   int64   // input entries (Σ of the users' degrees)
	userPoint []int32 // canonical user -> point
	puOff     []int32 // users of point p: puList[puOff[p]:puOff[p+1]]
	puList    []int32
	w         []int32 // users per point
	off       []int32 // features of point p: feat[off[p]:off[p+1]] (dense ids, sorted)
	feat      []int32
	postOff   []int32 // points holding dense feature f: post[postOff[f]:postOff[f+1]]
	post      []int32
	byDeg     []int32  // points by (degree, index)
	orig      []uint32 // dense feature id -> input feature id
	maxDeg    int32
	// nfn is the number of features that are not sensitive: dense ids ≥
	// nfn are the sensitive ones (see sensitive.go), nf when none. smin
	// is SensitiveMin of the parameters.
	nfn  int32
	smin int32
	// nbr lists, per point, its nbrPoints nearest other points (-1 pads),
	// as found by facilityCostsKNN (points with enough identical copies
	// have none) or, under the Mondrian start, nearestPoints.
	nbr []int32
	// bits holds every point as a bitset of words words when there are
	// few columns (nf ≤ denseColumns); distances are then popcounts.
	words int
	bits  []uint64
	// rare is feat with each point's features rarest first (rareRow).
	rare     []int32
	rareOnce sync.Once
}

// denseColumns is the largest number of columns for which points are also
// kept as bitsets: brute force over popcounts beats the inverted index when
// rows are short bit vectors (adult: 102 columns).
const denseColumns = 256

// rareRow returns the features of point p ordered by (number of points
// holding them, feature), rarest first; buildRare must have run.
func (pr *problem) rareRow(p int32) []int32 { return pr.rare[pr.off[p]:pr.off[p+1]] }

// buildRare fills pr.rare (see rareRow) once.
func (pr *problem) buildRare() {
	pr.rareOnce.Do(func() {
		rare := slices.Clone(pr.feat)
		for p := 0; p < pr.np; p++ {
			r := rare[pr.off[p]:pr.off[p+1]]
			slices.SortFunc(r, func(a, b int32) int {
				la := pr.postOff[a+1] - pr.postOff[a]
				lb := pr.postOff[b+1] - pr.postOff[b]
				if la != lb {
					return int(la - lb)
				}
				return int(a - b)
			})
		}
		pr.rare = rare
	})
}

// postingsLoad is Σ_f |postings of f|² / points: how many postings entries
// an inverted-index query scans on average when every point is indexed.
// Popular features make it grow linearly with the rows.
func (pr *problem) postingsLoad() float64 {
	var sq float64
	for f := 0; f < pr.nf; f++ {
		l := float64(pr.postOff[f+1] - pr.postOff[f])
		sq += l * l
	}
	return sq / float64(max(pr.np, 1))
}

// nbrPoints is the number of nearest points facilityCostsKNN and
// nearestPoints record.
const nbrPoints = 4

// neighbours returns the recorded nearest points of p.
func (pr *problem) neighbours(p int32) []int32 {
	if pr.nbr == nil {
		return nil
	}
	return pr.nbr[int(p)*nbrPoints : int(p+1)*nbrPoints]
}

func (pr *problem) bitsOf(p int32) []uint64 {
	return pr.bits[int(p)*pr.words : int(p+1)*pr.words]
}

// hamming is the distance of two points from their bitsets.
func hamming(a, b []uint64) int32 {
	d := 0
	for i := range a {
		d += bits.OnesCount64(a[i] ^ b[i])
	}
	return int32(d)
}

func (pr *problem) row(p int32) []int32 { return pr.feat[pr.off[p]:pr.off[p+1]] }
func (pr *problem) deg(p int32) int32   { return pr.off[p+1] - pr.off[p] }
func (pr *problem) users(p int32) []int32 {
	return pr.puList[pr.puOff[p]:pr.puOff[p+1]]
}

// urow is the dense row of canonical user u.
func (pr *problem) urow(u int32) []int32 { return pr.row(pr.userPoint[u]) }

// slotLead is how many rows ahead newProblem hints a row's table slot.
const slotLead = 16

// hashRow is matrix.HashRow; tests replace it to force collisions.
var hashRow = matrix.HashRow

// newProblem prepares m, its rows in order (user u is row u), with p's
// sensitive features.
func newProblem(m *matrix.Matrix, p Params) *problem {
	n := m.NumRows()
	pr := &problem{n: n, userPoint: make([]int32, n), entries: int64(len(m.Features)), smin: SensitiveMin(p)}
	var dense func(uint32) int
	pr.orig, dense = denseFeatures(m.Features)
	pr.nf = len(pr.orig)
	perm, nfn := sensitiveOrder(pr.orig, p.Sensitive)
	pr.nfn = int32(nfn)
	if perm != nil {
		orig, plain := make([]uint32, pr.nf), dense
		for f, id := range pr.orig {
			orig[perm[f]] = id
		}
		pr.orig = orig
		dense = func(f uint32) int { return int(perm[plain(f)]) }
	}

	// Points: identical rows share one, numbered by their first user. An
	// open-addressing table of row hashes finds a row's point (a hash
	// match is confirmed by comparing the rows); the rows' slots are
	// hinted a few rows ahead, so that the lookups do not wait on cache
	// misses one after the other (as a Go map keyed by the rows' bytes
	// did).
	size := 16
	for size < 2*n {
		size <<= 1
	}
	slots := make([]int32, size) // point+1; 0 is empty
	mask := uint64(size - 1)
	rowHash := make([]uint64, n)
	for u := range n {
		rowHash[u] = hashRow(m.Row(u))
	}
	var hashes []uint64 // of each point
	var first []int32   // first user of each point
	pr.feat = make([]int32, 0, len(m.Features))
	pr.off = append(pr.off, 0)
	for u := range n {
		if v := u + slotLead; v < n {
			prefetch.Line(unsafe.Pointer(&slots[rowHash[v]&mask]))
		}
		row, h := m.Row(u), rowHash[u]
		pos := h & mask
		p := int32(-1)
		for ; slots[pos] != 0; pos = (pos + 1) & mask {
			if q := slots[pos] - 1; hashes[q] == h && slices.Equal(m.Row(int(first[q])), row) {
				p = q
				break
			}
		}
		if p < 0 {
			p = int32(len(pr.w))
			slots[pos] = p + 1
			hashes = append(hashes, h)
			first = append(first, int32(u))
			pr.w = append(pr.w, 0)
			for _, f := range row {
				pr.feat = append(pr.feat, int32(dense(f)))
			}
			if perm != nil {
				slices.Sort(pr.feat[pr.off[len(pr.off)-1]:])
			}
			pr.off = append(pr.off, int32(len(pr.feat)))
			pr.maxDeg = max(pr.maxDeg, int32(len(row)))
		}
		pr.w[p]++
		pr.userPoint[u] = p
	}
	pr.np = len(pr.w)
	pr.puOff = make([]int32, pr.np+1)
	for p := 0; p < pr.np; p++ {
		pr.puOff[p+1] = pr.puOff[p] + pr.w[p]
	}
	pr.puList = make([]int32, n)
	fill := slices.Clone(pr.puOff[:pr.np])
	for u := 0; u < n; u++ {
		p := pr.userPoint[u]
		pr.puList[fill[p]] = int32(u)
		fill[p]++
	}
	pr.postOff = make([]int32, pr.nf+1)
	for _, f := range pr.feat {
		pr.postOff[f+1]++
	}
	for f := 0; f < pr.nf; f++ {
		pr.postOff[f+1] += pr.postOff[f]
	}
	pr.post = make([]int32, len(pr.feat))
	pos := slices.Clone(pr.postOff[:pr.nf])
	for p := 0; p < pr.np; p++ {
		for _, f := range pr.row(int32(p)) {
			pr.post[pos[f]] = int32(p)
			pos[f]++
		}
	}
	if pr.nf <= denseColumns {
		pr.words = (pr.nf + 63) / 64
		pr.bits = make([]uint64, pr.np*pr.words)
		for p := int32(0); p < int32(pr.np); p++ {
			b := pr.bitsOf(p)
			for _, f := range pr.row(p) {
				b[f/64] |= 1 << (f % 64)
			}
		}
	}
	// byDeg: points by (degree, index), a counting sort.
	degStart := make([]int32, pr.maxDeg+2)
	for p := int32(0); p < int32(pr.np); p++ {
		degStart[pr.deg(p)+1]++
	}
	for d := 0; d <= int(pr.maxDeg); d++ {
		degStart[d+1] += degStart[d]
	}
	pr.byDeg = make([]int32, pr.np)
	for p := int32(0); p < int32(pr.np); p++ {
		d := pr.deg(p)
		pr.byDeg[degStart[d]] = p
		degStart[d]++
	}
	return pr
}

// facilityCostsKNN returns, per point, factor × the sum of the distances
// from one of its users to its nn nearest other users (all other users when
// there are fewer than nn), found with knn.KNearest: exact when maxScan is
// 0, else bounded by it. A zero sum gives cost 0 even when factor is
// infinite. ix indexes the input in the problem's order. It also records
// the nearest points (see neighbours), and describes the search that ran.
func (pr *problem) facilityCostsKNN(ix *knn.Index, nn int, factor float64, w int, maxScan int) ([]float64, *knn.Graph, string, error) {
	g, st, err := ix.KNearest(nn, knn.Options{Workers: w, MaxScan: maxScan})
	if err != nil {
		return nil, nil, "", err
	}
	cost := make([]float64, pr.np)
	pr.nbr = make([]int32, pr.np*nbrPoints)
	for i := range pr.nbr {
		pr.nbr[i] = -1
	}
	for p := int32(0); p < int32(pr.np); p++ {
		u := pr.users(p)[0]
		idx, dist := g.Row(int(u))
		sum := 0
		for _, d := range dist {
			sum += int(d)
		}
		if sum > 0 {
			cost[p] = factor * float64(sum)
		}
		nb := pr.nbr[int(p)*nbrPoints : int(p+1)*nbrPoints]
		k := 0
		for _, v := range idx {
			q := pr.userPoint[v]
			if q == p || slices.Contains(nb[:k], q) {
				continue
			}
			nb[k] = q
			if k++; k == nbrPoints {
				break
			}
		}
	}
	return cost, g, searchName(st, maxScan), nil
}

// nearestPoints fills pr.nbr much as facilityCostsKNN does from the nn
// nearest rows, with a search for at most nbrPoints other points instead:
// a point's nearest other points, nearest first, while the users of those
// listed and the point's other users number fewer than nn (so a point of
// more than nn users has none), at most nbrPoints. Whole points are
// counted, so where points tie in distance the list can be shorter than
// facilityCostsKNN's, which counts rows in row order. It returns the
// search's name (SolveInfo.neighbour_search).
func (pr *problem) nearestPoints(ix *knn.Index, nn, w int, maxScan int) (string, error) {
	want := func(size int) int { return min(max(nn-(size-1), 0), nbrPoints) }
	o, st, err := ix.NearestOthers(want, knn.Options{Workers: w, MaxScan: maxScan})
	if err != nil {
		return "", err
	}
	pr.nbr = make([]int32, pr.np*nbrPoints)
	for p := int32(0); p < int32(pr.np); p++ {
		nb := pr.nbr[int(p)*nbrPoints : int(p+1)*nbrPoints]
		k, rows := 0, int(pr.w[p])-1
		for _, v := range o.Of(int(pr.users(p)[0])) {
			if rows >= nn {
				break
			}
			q := pr.userPoint[v]
			nb[k] = q
			k++
			rows += int(pr.w[q])
		}
		for ; k < nbrPoints; k++ {
			nb[k] = -1
		}
	}
	return searchName(st, maxScan), nil
}

// searchName names a neighbour search for SolveInfo.neighbour_search.
func searchName(st knn.Stats, maxScan int) string {
	if maxScan > 0 && st.Strategy != knn.Bitset.String() { // brute force is exact
		return fmt.Sprintf("bounded: knn %s, %d entries per query, %d of %d distinct-row queries cut", st.Strategy, maxScan, st.Cut, st.Distinct)
	}
	return "exact: knn " + st.Strategy
}

// centre returns the released row (input feature ids, sorted) of a
// cluster. cnt is zeroed scratch of length nf and touched scratch (as for
// costOf); cnt is left zeroed.
func (pr *problem) centre(members []int32, mode matrix.Mode, cnt []int32, touched *[]int32) []uint32 {
	for _, u := range members {
		for _, f := range pr.urow(u) {
			if cnt[f] == 0 {
				*touched = append(*touched, f)
			}
			cnt[f]++
		}
	}
	// Dense ids keep the order of the input ids (pr.orig ascends) but for
	// sensitive features, which come last.
	slices.Sort(*touched)
	s := int32(len(members))
	var out []uint32
	for _, f := range *touched {
		if pr.keep(f, cnt[f], s, mode) {
			out = append(out, pr.orig[f])
		}
		cnt[f] = 0
	}
	*touched = (*touched)[:0]
	if pr.nfn < int32(pr.nf) {
		slices.Sort(out)
	}
	return out
}

// keep says whether feature f, held by h of s users, is released: by the
// mode's rule, or the sensitive rule where f is sensitive.
func (pr *problem) keep(f, h, s int32, mode matrix.Mode) bool {
	if f >= pr.nfn {
		return shown(h, s, pr.smin)
	}
	return keep(h, s, mode)
}

// featCost is the cost of feature f held by h of s users (see keep).
func (pr *problem) featCost(f, h, s int32, mode matrix.Mode) cost {
	if f >= pr.nfn {
		return sensCost(h, s, pr.smin)
	}
	return featCost(h, s, mode)
}

// keep says whether a feature held by h of s users is released.
func keep(h, s int32, mode matrix.Mode) bool {
	if mode == matrix.NonSmooth {
		return h == s
	}
	return 2*h >= s
}

// cost is the suppressed and created entries of a release (created
// entries exist only in smooth mode).
type cost struct{ s, c int64 }

func (a cost) add(b cost) cost   { return cost{a.s + b.s, a.c + b.c} }
func (a cost) minus(b cost) cost { return cost{a.s - b.s, a.c - b.c} }

// featCost is the cost of a feature held by h of s users.
func featCost(h, s int32, mode matrix.Mode) cost {
	if !keep(h, s, mode) {
		return cost{s: int64(h)}
	}
	return cost{c: int64(s - h)}
}

// entriesOf is the number of input entries of members.
func (pr *problem) entriesOf(members []int32) int64 {
	n := int64(0)
	for _, u := range members {
		n += int64(len(pr.urow(u)))
	}
	return n
}

// costOf is the cost of members forming one cluster. cnt is zeroed
// scratch of length nf; it is left zeroed.
func (pr *problem) costOf(members []int32, mode matrix.Mode, cnt []int32, touched *[]int32) cost {
	for _, u := range members {
		for _, f := range pr.urow(u) {
			if cnt[f] == 0 {
				*touched = append(*touched, f)
			}
			cnt[f]++
		}
	}
	s := int32(len(members))
	var c cost
	for _, f := range *touched {
		c = c.add(pr.featCost(f, cnt[f], s, mode))
		cnt[f] = 0
	}
	*touched = (*touched)[:0]
	return c
}
