package knn

import (
	"math/bits"
	"sync/atomic"

	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// bitsets returns the groups' feature sets as bitsets of words words each.
func bitsets(x *index) (b []uint64, words int) {
	words = max((x.ncols+63)/64, 1)
	ng := x.numGroups()
	b = make([]uint64, ng*words)
	for g := 0; g < ng; g++ {
		row := b[g*words : (g+1)*words]
		for _, c := range x.feats(int32(g)) {
			row[c>>6] |= 1 << (uint(c) & 63)
		}
	}
	return b, words
}

// searchBitset is the brute force over all pairs of groups: distance is the
// popcount of the XOR of the bitsets. Candidates are scanned in ascending
// group order, so only strictly smaller distances displace kept ones.
func searchBitset(x *index, kOf func(int32) int, workers int) *groupLists {
	nb := newGroupLists(x, kOf)
	b, W := bitsets(x)
	ng := x.numGroups()
	var cand atomic.Int64
	tops := make([]topK, workers)
	par.For(workers, ng, 64, func(w, lo, hi int) {
		t := &tops[w]
		var c int64
		for u := lo; u < hi; u++ {
			t.reset(kOf(int32(u)))
			if t.n == 0 {
				continue
			}
			bound := t.bound()
			q := b[u*W : (u+1)*W]
			switch W {
			case 1:
				q0 := q[0]
				for v, bv := range b {
					key := uint64(bits.OnesCount64(q0^bv))<<32 | uint64(v)
					if key < bound && v != u {
						t.push(key)
						bound = t.bound()
					}
				}
			case 2:
				q0, q1 := q[0], q[1]
				for v := 0; v < ng; v++ {
					r := b[2*v : 2*v+2 : 2*v+2]
					key := uint64(bits.OnesCount64(q0^r[0])+bits.OnesCount64(q1^r[1]))<<32 | uint64(v)
					if key < bound && v != u {
						t.push(key)
						bound = t.bound()
					}
				}
			default:
				for v := 0; v < ng; v++ {
					r := b[v*W : (v+1)*W]
					d := 0
					for j, qw := range q {
						d += bits.OnesCount64(qw ^ r[j])
					}
					key := uint64(d)<<32 | uint64(v)
					if key < bound && v != u {
						t.push(key)
						bound = t.bound()
					}
				}
			}
			c += int64(ng - 1)
			t.sortedInto(nb.key[nb.off[u]:nb.off[u+1]])
		}
		cand.Add(c)
	})
	nb.candidates = cand.Load()
	return nb
}
