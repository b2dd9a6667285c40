package solver

import "math/bits"

// The quantity a release maximises is the Jaccard similarity of the input
// and output entries, J = (E − s) / (E + c) for E input entries, s
// suppressed and c created ones. It is a ratio, so the clustering
// decisions (refine's moves, split's cuts) minimise Dinkelbach's
// parametric objective s + λ·c at λ = the current J instead: a change
// lowers s + J·c exactly when it raises J, since
// (E − s') − J·(E + c') > 0 ⟺ J' > J. At J < 1 a created entry costs
// less than a suppressed one (dblp: a third). The release rule stays the
// mode's (majority or all); only the decisions see λ. The final choice
// among improve's candidates compares their J directly.

// weight is λ = num/den ≥ 0, the price of a created entry in suppressed
// entries.
type weight struct{ num, den int64 }

// unitWeight is λ = 1: s + c, the number of changed entries.
var unitWeight = weight{1, 1}

// jaccardWeight is λ = J of a release of cost c over entries input
// entries, (E − s) / (E + c), with both terms scaled down below 2^31
// so that of cannot overflow on any delta of a cluster.
func jaccardWeight(entries int64, c cost) weight {
	num, den := entries-c.s, entries+c.c
	if den <= 0 {
		return unitWeight // no entries: nothing to weigh
	}
	for den >= 1<<31 {
		num, den = num>>1, den>>1
	}
	return weight{max(num, 0), den}
}

// of is d.s + λ·d.c, scaled by den (the sign and order are what count).
func (w weight) of(d cost) int64 { return d.s*w.den + d.c*w.num }

// jaccardLess reports whether a release of cost a has a lower Jaccard
// than one of cost b over entries input entries: (E − a.s)(E + b.c) <
// (E − b.s)(E + a.c), compared exactly in 128 bits.
func jaccardLess(entries int64, a, b cost) bool {
	ah, al := bits.Mul64(uint64(entries-a.s), uint64(entries+b.c))
	bh, bl := bits.Mul64(uint64(entries-b.s), uint64(entries+a.c))
	return ah < bh || (ah == bh && al < bl)
}
