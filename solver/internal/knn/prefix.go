package knn

import (
	"math"
	"math/bits"
	"slices"

	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// postings is the inverted index of the Prefix strategy.
//
// The posting list of feature rank r holds every group with that feature,
// sorted by (degree, position of r in the group's rank-sorted list, group),
// so one degree is a contiguous block and, inside it, the entries whose
// feature comes early in the group come first.
type postings struct {
	byDeg    []int32 // all groups sorted by (degree, group)
	degStart []int32 // groups of degree d are byDeg[degStart[d]:degStart[d+1]]
	degPos   []int32 // group -> position in byDeg
	pOff     []int64 // list r is entries [pOff[r], pOff[r+1])
	ent      []entry // the lists, one after the other
	sbOff    []int64 // list r's sub-blocks are sb[sbOff[r]:sbOff[r+1]], the last a sentinel
	sb       []subBlock
	// heavyFrom is the first rank of the (up to) 64 most frequent features.
	heavyFrom int32
}

func buildPostings(x *index) *postings {
	P := buildDegrees(x)
	fillPostings(P, x)
	return P
}

// buildDegrees fills the parts of the postings that do not depend on the
// lists: byDeg, degStart, degPos and heavyFrom (all Facilities needs).
func buildDegrees(x *index) *postings {
	ng := x.numGroups()
	P := &postings{}
	maxDeg := int32(0)
	for g := int32(0); g < int32(ng); g++ {
		maxDeg = max(maxDeg, x.deg(g))
	}
	start := make([]int32, maxDeg+2)
	for g := int32(0); g < int32(ng); g++ {
		start[x.deg(g)+1]++
	}
	for d := int32(1); d <= maxDeg+1; d++ {
		start[d] += start[d-1]
	}
	P.degStart = start
	P.byDeg = make([]int32, ng)
	P.degPos = make([]int32, ng)
	cur := append([]int32(nil), start...)
	for g := int32(0); g < int32(ng); g++ {
		d := x.deg(g)
		P.byDeg[cur[d]] = g
		P.degPos[g] = cur[d]
		cur[d]++
	}
	P.heavyFrom = int32(max(x.ncols-64, 0))
	return P
}

// fillPostings builds the lists of P (see postings).
func fillPostings(P *postings, x *index) {
	start := P.degStart
	maxDeg := int32(len(start) - 2)
	entries := len(x.gFeat)
	P.pOff = make([]int64, x.ncols+1)
	for _, r := range x.gFeat {
		P.pOff[r+1]++
	}
	for r := 0; r < x.ncols; r++ {
		P.pOff[r+1] += P.pOff[r]
	}
	P.ent = make([]entry, entries)
	fill := append([]int64(nil), P.pOff[:x.ncols]...)
	// Entries go to their lists by (degree, position, byDeg order), so
	// each list fills in sub-block order; a sub-block starts where its
	// list's (degree, position) changes. Those starts are recorded in
	// fill order and sorted by list afterwards (stable: each list keeps
	// its order), which writes far less at scattered places than keeping
	// a degree and a position per entry.
	last := make([]int64, x.ncols) // list -> degree<<32 | position of its last entry, -1 none
	for r := range last {
		last[r] = -1
	}
	type sbStart struct {
		r, d, q int32
		start   int64
	}
	var starts []sbStart
	perList := make([]int64, x.ncols) // sub-blocks per list
	// Per degree, the block's features and suffix signatures are first
	// copied position-major (element q of every group, in block order),
	// so the passes over the positions read them in sequence instead of
	// reading every group's features again at scattered places.
	var (
		feat []int32  // feat[q*n+i]: feature q of the block's i-th group
		sig  []uint64 // sig[2(q*n+i)], sig[2(q*n+i)+1]: its suffix signatures
		off  []uint32 // off[i]: where the i-th group's features start
		suf  []uint64 // one group's suffix signatures
	)
	for d := int32(1); d <= maxDeg; d++ {
		block := P.byDeg[start[d]:start[d+1]]
		n := len(block)
		feat = slices.Grow(feat[:0], int(d)*n)[:int(d)*n]
		sig = slices.Grow(sig[:0], 2*int(d)*n)[:2*int(d)*n]
		off = slices.Grow(off[:0], n)[:n]
		suf = slices.Grow(suf[:0], 2*int(d+1))[:2*int(d+1)]
		for i, g := range block {
			f := x.feats(g)
			off[i] = uint32(x.gOff[g])
			P.sufSigs(f, suf)
			for q, r := range f {
				j := q*n + i
				feat[j] = r
				sig[2*j], sig[2*j+1] = suf[2*q], suf[2*q+1]
			}
		}
		for q := int32(0); q < d; q++ {
			dq := int64(d)<<32 | int64(q)
			base := int(q) * n
			for i, g := range block {
				j := base + i
				r := feat[j]
				pos := fill[r]
				fill[r]++
				P.ent[pos] = entry{g: g, off: off[i], sig: sig[2*j], lig: sig[2*j+1]}
				if last[r] != dq {
					last[r] = dq
					starts = append(starts, sbStart{r: r, d: d, q: q, start: pos})
					perList[r]++
				}
			}
		}
	}
	// Sub-blocks: runs of equal (degree, position) in each list, plus a
	// sentinel per list.
	P.sbOff = make([]int64, x.ncols+1)
	for r := 0; r < x.ncols; r++ {
		P.sbOff[r+1] = P.sbOff[r] + perList[r] + 1
	}
	P.sb = make([]subBlock, P.sbOff[x.ncols])
	cur := slices.Clone(P.sbOff[:x.ncols])
	for _, st := range starts {
		P.sb[cur[st.r]] = subBlock{start: st.start, d: st.d, q: st.q}
		cur[st.r]++
	}
	for r := 0; r < x.ncols; r++ {
		list := P.sb[P.sbOff[r]:P.sbOff[r+1]]
		list[len(list)-1] = subBlock{start: P.pOff[r+1], d: -1}
		for i := len(list) - 2; i >= 0; i-- {
			if list[i].d != list[i+1].d {
				list[i].nextD = int32(i + 1)
			} else {
				list[i].nextD = list[i+1].nextD
			}
		}
	}
}

// subBlock is a run of entries of one list with equal degree and position,
// from start to the next sub-block's start; nextD is the first sub-block
// of the next larger degree, counted from the start of the list.
type subBlock struct {
	start int64
	d, q  int32
	nextD int32
}

// sufSigs writes the signatures of every suffix f[q:] of a rank-sorted
// feature list to out[2q] (heavy) and out[2q+1] (light), for q = 0..len(f)
// (len(out) = 2·(len(f)+1)): heavy has bit r−heavyFrom for each heavy
// feature r (the up to 64 most frequent ones), light has bit hash(r) mod
// 64 for each other feature. They bound the overlap of two lists without
// reading them (see overlapBound).
func (P *postings) sufSigs(f []int32, out []uint64) {
	var heavy, light uint64
	out[2*len(f)], out[2*len(f)+1] = 0, 0
	for q := len(f) - 1; q >= 0; q-- {
		if r := f[q]; r >= P.heavyFrom {
			heavy |= 1 << uint(r-P.heavyFrom)
		} else {
			light |= 1 << (uint32(r) * 0x9E3779B1 >> 26)
		}
		out[2*q], out[2*q+1] = heavy, light
	}
}

// overlapBound bounds |a∩b| from the degrees and signatures of a and b:
// shared heavy features are exact bits; every light bit of b missing from
// a stands for at least one light feature of b that a lacks (and vice
// versa).
func overlapBound(da, ha int, sa, la uint64, db int, sb, lb uint64) int {
	hb := bits.OnesCount64(sb)
	return bits.OnesCount64(sa&sb) + min(db-hb-bits.OnesCount64(lb&^la), da-ha-bits.OnesCount64(la&^lb))
}

// nextSet is the index of the first set bit of b in [from, to), or to.
func nextSet(b []uint64, from, to int64) int64 {
	if from >= to {
		return to
	}
	w := from >> 6
	word := b[w] >> (uint(from) & 63)
	if word != 0 {
		return min(from+int64(bits.TrailingZeros64(word)), to)
	}
	for w++; w<<6 < to; w++ {
		if b[w] != 0 {
			return min(w<<6+int64(bits.TrailingZeros64(b[w])), to)
		}
	}
	return to
}

// entry is one posting: a group holding the list's feature and the
// signatures of the group's features from that feature on (a candidate
// first met in the list of its first shared feature shares nothing before
// it, so the suffixes bound the overlap more tightly), kept together so a scan reads one stream (degree and
// position are those of the entry's sub-block). off is where the group's
// features start in the index (x.gOff[g]; they end off+degree): a query
// verifying the candidate reads them directly, one cache miss instead of
// two on inputs far larger than the caches (it fits in the struct's
// padding; checkParams keeps it below 2³²).
type entry struct {
	g        int32
	off      uint32
	sig, lig uint64
}

// searcher is one worker's scratch space for Prefix queries.
type searcher struct {
	x     *index
	P     *postings
	seen  []uint8 // group -> stamp of the last query that looked at it
	mark  []uint8 // feature rank -> stamp of the last query holding it
	stamp uint8   // small stamps keep seen and mark in cache; cleared on wrap
	top   topK
	usig  []uint64 // suffix signatures of the query (see sufSigs)
	cand  int64    // exact distance evaluations
	scan  int64    // posting entries looked at
	// maxScan bounds the entries one query reads (0: no bound); cut
	// counts the KNearest queries it stopped (Stats.Cut).
	maxScan int64
	cut     int64
}

func newSearcher(x *index, P *postings, maxScan int64, seen int) *searcher {
	return &searcher{x: x, P: P, seen: make([]uint8, seen), mark: make([]uint8, x.ncols), maxScan: maxScan}
}

// scanLimit is the value of s.scan at which the query just begun stops.
func (s *searcher) scanLimit() int64 {
	if s.maxScan == 0 {
		return math.MaxInt64
	}
	return s.scan + s.maxScan
}

const inf = 1 << 30

// begin starts a query for group u: a fresh stamp (1 after a wrap, when
// seen and mark are cleared), u's features marked and their suffix
// signatures in s.usig. It returns u's features.
func (s *searcher) begin(u int32) []int32 {
	s.stamp++
	if s.stamp == 0 {
		clear(s.seen)
		clear(s.mark)
		s.stamp = 1
	}
	F := s.x.feats(u)
	for _, r := range F {
		s.mark[r] = s.stamp
	}
	s.usig = slices.Grow(s.usig[:0], 2*(len(F)+1))[:2*(len(F)+1)]
	s.P.sufSigs(F, s.usig)
	return F
}

// run fills s.top (capacity set by the caller) with the nearest groups to
// group u other than u, keyed dist<<32 | group.
//
// A candidate enters when (dist, group) < (D, L), the worst kept key. Ties
// at D matter only for groups below L; as groups within one posting
// sub-block ascend, a sub-block that can only produce ties is cut at the
// first group above L.
func (s *searcher) run(u int32, hint []int32) {
	x, P, t := s.x, s.P, &s.top
	if t.n == 0 {
		return
	}
	F := s.begin(u)
	s.seen[u] = s.stamp
	st, seen, mark := s.stamp, s.seen, s.mark
	a := len(F)
	D, L := inf, int64(1)<<62
	refresh := func() {
		if t.full() {
			b := t.bound()
			D, L = int(b>>32), int64(uint32(b))
		}
	}
	refresh() // the caller may have offered keys already
	// verify offers v if its exact distance lets it enter.
	verify := func(v int32, f []int32) {
		s.cand++
		if k, ok := exactKey(f, mark, st, a, D, L, v); ok {
			t.push(k)
			refresh()
		}
	}
	nd := int64(len(P.byDeg))

	// Hinted groups (likely neighbours) first: a tight bound early on.
	for _, v := range hint {
		if seen[v] != st {
			seen[v] = st
			verify(v, x.feats(v))
		}
	}

	// Seed with the smallest groups: a finite bound early on.
	for i := int64(0); !t.full(); i++ {
		if i >= nd {
			break
		}
		if v := P.byDeg[i]; seen[v] != st {
			seen[v] = st
			verify(v, x.feats(v))
		}
	}

	// Candidates sharing a feature: prefix, length and positional filters.
	// In list p, a group of degree d whose feature sits at position q can
	// share at most 1+min(a-p-1, d-q-1) features with u if p is the first
	// feature they share (true for every group that can enter, when met),
	// and then all they share lies in the suffixes F[p:] of u and f[q:] of
	// the group, whose signatures bound it. A bounded query stops here
	// after maxScan entries (and still gets the fill-in below).
	limit := s.scanLimit()
lists:
	for p := 0; p < a; p++ {
		sbs := P.sb[P.sbOff[F[p]]:P.sbOff[F[p]+1]]
		su, lu := s.usig[2*p], s.usig[2*p+1]
		hu := bits.OnesCount64(su)
		for bi := int32(0); bi < int32(len(sbs))-1; {
			sb := &sbs[bi]
			d, q := int(sb.d), int(sb.q)
			need, tiesOnly, degFail, posFail := runFilter(a, p, d, q, D)
			if degFail {
				break // larger degrees fail too
			}
			if posFail {
				bi = sb.nextD
				continue
			}
			end := sbs[bi+1].start
			for b := sb.start; b < end; b++ {
				if s.scan == limit {
					s.cut++
					break lists
				}
				s.scan++
				e := &P.ent[b]
				v := e.g
				if tiesOnly && int64(v) > L {
					break
				}
				// Overlap bound from the signatures alone (no access to v).
				if overlapBound(a-p, hu, su, lu, d-q, e.sig, e.lig) < need {
					continue
				}
				if seen[v] == st {
					continue
				}
				seen[v] = st
				oldD := D
				verify(v, x.gFeat[e.off:e.off+uint32(d)])
				if D != oldD {
					var degFail, posFail bool
					if need, tiesOnly, degFail, posFail = runFilter(a, p, d, q, D); degFail || posFail {
						break
					}
				}
			}
			bi++
		}
	}

	// Candidates sharing nothing: distance a+d. Within one degree, groups
	// ascend, so the first one that cannot enter ends the degree.
	for d := 0; d <= D-a && d < len(P.degStart)-1; d++ {
		key := uint64(a+d) << 32
		end := int64(P.degStart[d+1])
		for i := int64(P.degStart[d]); i < end; i++ {
			v := P.byDeg[i]
			if seen[v] == st {
				continue
			}
			k := key | uint64(v)
			if k >= t.bound() {
				// Only a tie at D with a lower group could still enter;
				// later groups of this degree are above v.
				if int64(v) > L {
					break
				}
				continue
			}
			t.push(k)
			refresh()
		}
	}
}

// exactKey is the exact check of both searches (searcher.run and
// Facilities.nearestOpen): the overlap of the query, of degree a and whose
// features are marked st in mark, with the candidate id of features f. It
// returns the candidate's key dist<<32 | id, or false as soon as a missing
// feature shows that the candidate cannot enter under the worst kept key
// (D, L): entering needs an overlap of (a+d-D+1)/2 for dist <= D, or
// (a+d-D+2)/2 when only dist < D enters (id above L), so at most d-need of
// its d features may be missing. A key returned may still fail to enter:
// topK.push decides.
func exactKey(f []int32, mark []uint8, st uint8, a, D int, L int64, id int32) (uint64, bool) {
	d := len(f)
	twice := a + d - D + 1 // twice the overlap needed, rounded up
	if int64(id) > L {
		twice++
	}
	allow, miss := d-twice>>1, 0
	for _, r := range f {
		if mark[r] != st {
			if miss++; miss > allow {
				return 0, false
			}
		}
	}
	return uint64(a-d+2*miss)<<32 | uint64(uint32(id)), true
}

// runFilter applies the length, prefix and positional filters to the run
// of degree d and position q in the list of the query's p-th feature (query
// degree a, current bound D): a group of the run enters only with an
// overlap of at least need; with tiesOnly it can only tie at D (so only
// groups below the worst kept label matter); degFail means this degree and
// the larger ones fail in this list, posFail that this position and the
// later ones of this degree fail.
func runFilter(a, p, d, q, D int) (need int, tiesOnly, degFail, posFail bool) {
	need = (a + d - D + 1) >> 1
	needS := (a + d - D + 2) >> 1
	tiesOnly = q > d-needS || a-p < needS || d > D-1+a-2*p
	return need, tiesOnly, d > D+a-2*p || a-p < need, q > d-need
}

// searchPrefix runs the Prefix search for every group.
func searchPrefix(x *index, kOf func(int32) int, workers int, maxScan int64) *groupLists {
	nb := newGroupLists(x, kOf)
	P := buildPostings(x)
	ng := x.numGroups()
	ss := make([]*searcher, workers)
	for w := range ss {
		ss[w] = newSearcher(x, P, maxScan, x.numGroups())
	}
	// Queries run in an order that puts groups with the same frequent
	// features next to each other; each query is hinted with the previous
	// one in the order and that one's neighbours, which tightens its bound
	// from the start. Hints only change the work of an exact search, but
	// they change what a bounded one finds, so the chain restarts every
	// hintRun queries, at the same places whatever the number of workers.
	order := hintOrder(x, workers)
	par.For(workers, ng, hintRun, func(w, lo, hi int) {
		s := ss[w]
		hint := make([]int32, 0, 64)
		for i := lo; i < hi; i++ {
			if i%hintRun == 0 {
				hint = hint[:0]
			}
			u := order[i]
			s.top.reset(kOf(u))
			s.run(u, hint)
			list := nb.key[nb.off[u]:nb.off[u+1]]
			s.top.sortedInto(list)
			hint = append(hint[:0], u)
			for _, k := range list {
				hint = append(hint, int32(uint32(k)))
			}
		}
	})
	for _, s := range ss {
		nb.candidates += s.cand
		nb.cut += s.cut
	}
	return nb
}

// hintRun is the length of a chain of hinted queries (see searchPrefix).
const hintRun = 64

// hintOrder orders the groups by their feature lists read from the most
// frequent feature down, compared lexicographically (then by group), so
// rows sharing their frequent features are close in the order.
func hintOrder(x *index, workers int) []int32 {
	ng := x.numGroups()
	order := make([]int32, ng)
	for g := range order {
		order[g] = int32(g)
	}
	par.SortFunc(workers, order, func(a, b int32) int {
		fa, fb := x.feats(a), x.feats(b)
		i, j := len(fa)-1, len(fb)-1
		for ; i >= 0 && j >= 0; i, j = i-1, j-1 {
			if fa[i] != fb[j] {
				return int(fb[j] - fa[i]) // more frequent feature first
			}
		}
		if i != j {
			return i - j
		}
		return int(a - b)
	})
	return order
}
