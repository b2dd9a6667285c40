package knn

import (
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/smoothanon/smoothanon/solver/internal/prefetch"
)

// openLists is the Prefix strategy's index of the open groups of one
// Facilities: per feature rank, the open groups holding it, in runs of
// equal (degree, position of the feature in the group) sorted by (degree,
// position), each run sorted by label (the lowest label of the group's open rows,
// the tie-break key). It holds only open groups, so a query reads compact
// lists whose length grows with the open facilities, not with the rows.
type openLists struct {
	lists [][]openRun // feature rank -> runs
	// some has bit r set when list r is not empty: a query skips the
	// empty lists of its rare features without touching them.
	some []uint64
	suf  []uint64 // scratch: suffix signatures of the group being inserted

	// Slots: every open group's features, copied into one compact array
	// when it opens, so verifying a candidate reads a compact array that
	// stays in the near caches instead of the whole index's feature array
	// (on large inputs in DRAM: two dependent misses per candidate). Entries
	// name their group by slot. Slots are not reused: a group closed and
	// opened again takes a new one, so the store grows with every opening
	// and closing does not shrink it (the solver's restarts only open,
	// its closing step only closes).
	slot     []int32 // group -> slot, -1 when closed
	slotOff  []int64 // slot i's features are slotFeat[slotOff[i]:slotOff[i+1]]
	slotFeat []int32
	// slotSeen is the searcher's seen, by slot: a stamp per open group
	// rather than per group keeps it in the near caches.
	slotSeen []uint8
}

// openRun is the open groups of one degree and position in one list: the
// one of lowest label in first, the others in rest by label. A run is
// never empty, and most hold one group on power-law data, so
// keeping the first entry in the run itself saves a query a cache miss per
// run it reads (the lists outgrow the near caches on large inputs).
type openRun struct {
	d, q  int32
	first openEntry
	rest  []openEntry
}

// entry is the run's j-th entry by label, 0 ≤ j ≤ len(rest).
func (rn *openRun) entry(j int) *openEntry {
	if j == 0 {
		return &rn.first
	}
	return &rn.rest[j-1]
}

// openEntry is one open group in a list, by slot, with its label and the
// signatures of its features from the list's feature on (see entry).
type openEntry struct {
	slot, label int32
	sig, lig    uint64
}

func newOpenLists(ncols, groups int) *openLists {
	o := &openLists{
		lists:   make([][]openRun, ncols),
		some:    make([]uint64, (ncols+63)/64),
		slot:    make([]int32, groups),
		slotOff: []int64{0},
	}
	for g := range o.slot {
		o.slot[g] = -1
	}
	return o
}

// open adds the closed group g (features F) with label.
func (o *openLists) open(P *postings, F []int32, g, label int32) {
	if o.slot[g] >= 0 {
		panic("knn: opening an open group")
	}
	if len(o.slotSeen) == math.MaxInt32 {
		panic("knn: more than 2^31-1 facility openings")
	}
	o.slot[g] = int32(len(o.slotSeen))
	o.slotFeat = append(o.slotFeat, F...)
	o.slotOff = append(o.slotOff, int64(len(o.slotFeat)))
	o.slotSeen = append(o.slotSeen, 0)
	o.insert(P, F, g, label)
}

// close deletes the open group g, opened or last relabelled with label.
func (o *openLists) close(F []int32, g, label int32) {
	o.remove(F, g, label)
	o.slot[g] = -1
}

// feats is the features of the group in slot sl.
func (o *openLists) feats(sl int32) []int32 {
	return o.slotFeat[o.slotOff[sl]:o.slotOff[sl+1]]
}

// insert adds the open group g (features F, slot assigned) with label.
func (o *openLists) insert(P *postings, F []int32, g, label int32) {
	d := int32(len(F))
	sl := o.slot[g]
	o.suf = slices.Grow(o.suf[:0], 2*(len(F)+1))[:2*(len(F)+1)]
	P.sufSigs(F, o.suf)
	for q, r := range F {
		ent := openEntry{slot: sl, label: label, sig: o.suf[2*q], lig: o.suf[2*q+1]}
		runs := o.lists[r]
		i, found := slices.BinarySearchFunc(runs, [2]int32{d, int32(q)}, cmpRun)
		if !found {
			runs = slices.Insert(runs, i, openRun{d: d, q: int32(q), first: ent})
			o.lists[r] = runs
			o.some[r>>6] |= 1 << (uint(r) & 63)
			continue
		}
		rn := &runs[i]
		switch n := len(rn.rest); {
		case n == 0 && rn.first.label < label, n > 0 && rn.rest[n-1].label < label:
			rn.rest = append(rn.rest, ent) // the common case: labels arrive in order
		case label < rn.first.label:
			rn.rest = slices.Insert(rn.rest, 0, rn.first)
			rn.first = ent
		default:
			j, _ := slices.BinarySearchFunc(rn.rest, label, cmpLabel)
			rn.rest = slices.Insert(rn.rest, j, ent)
		}
	}
}

// remove deletes the open group g, inserted with label; it keeps its slot.
func (o *openLists) remove(F []int32, g, label int32) {
	d := int32(len(F))
	sl := o.slot[g]
	for q, r := range F {
		runs := o.lists[r]
		i, found := slices.BinarySearchFunc(runs, [2]int32{d, int32(q)}, cmpRun)
		if !found {
			panic("knn: open group missing from its list")
		}
		rn := &runs[i]
		if rn.first.label == label {
			if rn.first.slot != sl {
				panic("knn: open group missing from its run")
			}
			if len(rn.rest) > 0 {
				rn.first = rn.rest[0]
				rn.rest = slices.Delete(rn.rest, 0, 1)
				continue
			}
			runs = slices.Delete(runs, i, i+1)
			o.lists[r] = runs
			if len(runs) == 0 {
				o.some[r>>6] &^= 1 << (uint(r) & 63)
			}
			continue
		}
		j, found := slices.BinarySearchFunc(rn.rest, label, cmpLabel)
		if !found || rn.rest[j].slot != sl {
			panic("knn: open group missing from its run")
		}
		rn.rest = slices.Delete(rn.rest, j, j+1)
	}
}

func cmpLabel(x openEntry, l int32) int { return int(x.label - l) }

func cmpRun(r openRun, k [2]int32) int {
	if r.d != k[0] {
		return int(r.d - k[0])
	}
	return int(r.q - k[1])
}

// nearestOpen fills s.top (capacity 1, possibly holding a seed key) with
// the nearest open group to the closed group u, keyed dist<<32 | label.
// It is run's search restricted to the open groups, over openLists:
//
// A candidate enters when (dist, label) < (D, L), the worst kept key. Ties
// at D matter only for labels below L; runs ascend by label, so a run that
// can only produce ties is cut at the first label above L.
//
// It shares searcher.run's core: the query's start (begin), the filters
// (runFilter, overlapBound) and the exact check (exactKey). Only the walk
// over the lists is its own, since openLists' runs and entries are laid
// out apart from the postings' (docs/decisions/016).
func (f *Facilities) nearestOpen(u int32) {
	s, x, P, o := f.s, f.sh.x, f.sh.P, f.ol
	t := &s.top
	F := s.begin(u)
	st, mark := s.stamp, s.mark
	seen := o.slotSeen // by slot (see openLists)
	if st == 1 {
		clear(seen) // the stamps wrapped (or this is the first query)
	}
	a := len(F)
	D, L := inf, int64(1)<<62
	refresh := func() {
		if t.full() {
			b := t.bound()
			D, L = int(b>>32), int64(uint32(b))
		}
	}
	refresh() // the caller may have offered a key already
	// verify offers the group in slot sl if its exact distance lets it
	// enter.
	verify := func(sl, label int32) {
		s.cand++
		if k, ok := exactKey(o.feats(sl), mark, st, a, D, L, label); ok {
			t.push(k)
			refresh()
		}
	}
	nd := int64(len(P.byDeg))

	// The smallest open group: its degree bounds all the others', and it
	// seeds the search with a finite bound.
	f.degLo = nextSet(f.openDeg, f.degLo, nd)
	dmin := 0
	if f.degLo < nd {
		v := P.byDeg[f.degLo]
		dmin = int(x.deg(v))
		if !t.full() {
			sl := o.slot[v]
			seen[sl] = st
			verify(sl, f.minOpen[v])
		}
	}

	// Candidates sharing a feature: prefix, length and positional filters.
	// In list p, a group of degree d whose feature sits at position q can
	// share at most 1+min(a-p-1, d-q-1) features with u if p is the first
	// feature they share (true for every group that can enter, when met),
	// and then all they share lies in the suffixes of u and the group from
	// that feature on. A bounded query stops here after maxScan entries.
	limit := s.scanLimit()
	// The lists' headers, then each next list's first run while this one
	// is read, are hinted ahead: on large inputs the lists sit in L3 or
	// DRAM and would be read one miss after the other.
	for _, r := range F {
		prefetch.Line(unsafe.Pointer(&o.lists[r]))
	}
lists:
	for p := 0; p < a; p++ {
		if dmin > D+a-2*p || a-p < (a+dmin-D+1)>>1 {
			break // every run of this list and the later ones fails
		}
		if r := F[p]; o.some[r>>6]&(1<<(uint(r)&63)) == 0 {
			continue
		}
		runs := o.lists[F[p]]
		if p+1 < a {
			if nx := o.lists[F[p+1]]; len(nx) > 0 {
				prefetch.Line(unsafe.Pointer(&nx[0]))
			}
		}
		su, lu := s.usig[2*p], s.usig[2*p+1]
		hu := bits.OnesCount64(su)
		for bi := 0; bi < len(runs); {
			rn := &runs[bi]
			d, q := int(rn.d), int(rn.q)
			need, tiesOnly, degFail, posFail := runFilter(a, p, d, q, D)
			if degFail {
				break // larger degrees fail too
			}
			if posFail {
				for bi++; bi < len(runs) && int(runs[bi].d) == d; bi++ {
				}
				continue // later positions of this degree fail too
			}
			for j := 0; j <= len(rn.rest); j++ {
				if s.scan == limit {
					break lists
				}
				s.scan++
				e := rn.entry(j)
				if tiesOnly && int64(e.label) > L {
					break
				}
				// Overlap bound from the signatures alone (no access to v).
				if overlapBound(a-p, hu, su, lu, d-q, e.sig, e.lig) < need {
					continue
				}
				sl := e.slot
				if seen[sl] == st {
					continue
				}
				seen[sl] = st
				oldD := D
				verify(sl, e.label)
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

	// Candidates sharing nothing: distance a+d. Of degree d, only the open
	// group of lowest label can be the answer. Offering (a+d, label) for
	// it is exact even if it shares features with u: its true key is then
	// smaller, and was offered above or is beaten by the bound already,
	// and so is every other group of degree d.
	for d := 0; d <= D-a && d < len(P.degStart)-1; d++ {
		if l := f.minOfDegree(d); l >= 0 {
			t.push(uint64(a+d)<<32 | uint64(l))
			refresh()
		}
	}
}
