package solver

import "github.com/smoothanon/smoothanon/matrix"

// cstat is a cluster's feature counts for cost deltas.
//
// The deltas of adding or removing a member depend, feature by feature of
// the member's row, only on how h compares with s/2 (smooth) or on whether
// h = s or h = s−1 (nonsmooth): a feature held by fewer than ⌊s/2⌋ members
// stays dropped either way and counts as if absent. So the deltas read hv,
// which holds only the features with at least hmin holders, where
// hmin ≤ ⌊s/2⌋ at every size above 1: a few features, in a few cache
// lines, where h holds every feature of the cluster. On large inputs the
// clusters' h do not fit the CPU caches, and lookups in them would be the
// largest part of refine's moves.
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
	// sens counts the sensitive features (nil where the problem has
	// none); h, hv, byH, M and W count only the others.
	sens *sstat
}

// newCstat returns the counts of a cluster of members. hv is built once at
// the end (hmin = 0 while adding: hv not kept).
func newCstat(pr *problem, members []int32) cstat {
	c := cstat{byH: make([]int32, 2)}
	if pr.nfn < int32(pr.nf) {
		c.sens = newSstat(pr.nfn, pr.smin)
	}
	for _, u := range members {
		c.add(pr.urow(u))
	}
	c.reindex()
	return c
}

// heavyBounds is the range that hv's threshold may take at size s before
// hv is rebuilt, and the threshold a rebuild sets. A margin below ⌊s/2⌋
// lets a cluster shrink by a few members between rebuilds, and a rebuild
// on growth keeps hv small; both cost a scan of h, at most once per about
// s/8 size changes.
func heavyBounds(s int32) (lo, hi, set int32) {
	half := (s + 1) / 2
	slack := max(1, s/16)
	return max(1, half-3*slack), max(1, s/2), max(1, half-slack)
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

// split cuts a row (sorted) into its features that are not sensitive and
// its sensitive ones, which come last.
func (c *cstat) split(row []int32) (plain, sens []int32) {
	if c.sens == nil {
		return row, nil
	}
	i := len(row)
	for i > 0 && row[i-1] >= c.sens.nfn {
		i--
	}
	return row[:i], row[i:]
}

// add adds a member with row.
func (c *cstat) add(row []int32) { c.member(row, 1) }

// remove removes a member with row.
func (c *cstat) remove(row []int32) { c.member(row, -1) }

// member adds (d = 1) or removes (d = −1) a member with row.
func (c *cstat) member(row []int32, d int32) {
	row, srow := c.split(row)
	for _, f := range row {
		c.bump(f, d)
	}
	for _, f := range srow {
		c.sens.bump(f, d)
	}
	c.resize(d)
}

// total is the cost of the cluster.
func (c *cstat) total(mode matrix.Mode) cost {
	var t cost
	c.h.each(func(_, h int32) { t = t.add(featCost(h, c.s, mode)) })
	if c.sens != nil {
		t = t.add(c.sens.total(c.s))
	}
	return t
}

// deltaIn is the change of the suppressed and created entries of adding
// a user with row to c.
func (c *cstat) deltaIn(row []int32, mode matrix.Mode) cost {
	row, srow := c.split(row)
	d := c.plainIn(row, mode)
	if c.sens != nil {
		d = d.add(c.sens.deltaIn(srow, c.s))
	}
	return d
}

// deltaOut is the change of the suppressed and created entries of removing
// a member with row from c.
func (c *cstat) deltaOut(row []int32, mode matrix.Mode) cost {
	row, srow := c.split(row)
	d := c.plainOut(row, mode)
	if c.sens != nil {
		d = d.add(c.sens.deltaOut(srow, c.s))
	}
	return d
}

// plainIn is deltaIn for a row without sensitive features.
func (c *cstat) plainIn(row []int32, mode matrix.Mode) cost {
	s := c.s
	if mode == matrix.NonSmooth {
		a := int64(0)
		for _, f := range row {
			if c.hv.get(f) == s {
				a++
			}
		}
		return cost{s: int64(len(row)) - int64(s+1)*a + int64(s)*int64(c.at(s))}
	}
	// Features the user lacks: those with 2h > s stay kept and gain a
	// created entry; those with 2h = s (kept on the tie) are dropped, their
	// h = s/2 created entries becoming h suppressed ones.
	var tie int64
	if s%2 == 0 {
		tie = int64(c.at(s/2)) * int64(s/2)
	}
	d := cost{s: tie, c: int64(c.M) - tie}
	// The user's features: their own change, less the above. A feature
	// with h < hmin (read as 0) is held by fewer than s/2 − 1 members and
	// stays dropped: one more suppressed entry.
	for _, f := range row {
		h := c.hv.get(f)
		switch {
		case 2*h > s: // kept before and after: no change (the base added one)
			d.c--
		case 2*h == s: // kept before and after: no change (the base moved h)
			d.s -= int64(h)
			d.c += int64(h)
		case 2*(h+1) >= s+1: // dropped, now kept: h suppressed become s−h created
			d.s -= int64(h)
			d.c += int64(s - h)
		default:
			d.s++
		}
	}
	return d
}

// plainOut is deltaOut for a row without sensitive features.
func (c *cstat) plainOut(row []int32, mode matrix.Mode) cost {
	s := c.s
	if mode == matrix.NonSmooth {
		n1 := int64(c.at(s - 1))
		for _, f := range row {
			if c.hv.get(f) == s-1 {
				n1--
			}
		}
		a := int64(c.at(s))
		return cost{s: -int64(len(row)) - int64(s-1)*(a+n1) + int64(s)*a}
	}
	// Features the member lacks: those with 2h ≥ s stay kept and lose a
	// created entry; those with 2h = s − 1 (dropped) become kept on the
	// tie, their h suppressed entries becoming h created ones.
	var tie int64
	if s%2 == 1 {
		tie = int64(c.at((s-1)/2)) * int64((s-1)/2)
	}
	d := cost{s: -tie, c: tie - int64(c.W)}
	// The member's features: their own change, less the above. A feature
	// with h < hmin (read as 0) has 2h < s − 1 and stays dropped: one
	// suppressed entry fewer.
	for _, f := range row {
		h := c.hv.get(f)
		switch {
		case 2*h > s: // kept before and after, s − h created: no change
			d.c++
		case 2*h == s: // kept (h created), then dropped (h − 1 suppressed)
			d.s += int64(h - 1)
			d.c += 1 - int64(h)
		case 2*h == s-1: // dropped before and after (the base moved h)
			d.s += int64(h) - 1
			d.c -= int64(h)
		default:
			d.s--
		}
	}
	return d
}

// deltaHolder is the change of feature f's cost when its holders change
// by dh (±1) at the same size. A feature below hv's threshold (read as 0)
// is dropped before and after where hmin ≤ ⌊s/2⌋ (every size above 1),
// and costs one more or one fewer suppressed entry; the exception is a
// feature gaining a holder where hmin = s/2 exactly (s even, smooth),
// which the one more holder may keep on the tie. Its count, and any count
// while hv is not kept (hmin = 0) or at size 1, is read from h.
func (c *cstat) deltaHolder(f, dh int32, mode matrix.Mode) cost {
	if c.sens != nil && f >= c.sens.nfn {
		return c.sens.deltaHolder(f, dh, c.s)
	}
	h := c.hv.get(f)
	if h == 0 && c.hmin > 0 && 2*c.hmin <= c.s && (dh < 0 || 2*c.hmin < c.s || mode == matrix.NonSmooth) {
		return cost{s: int64(dh)}
	}
	if h == 0 {
		h = c.h.get(f)
	}
	return featCost(h+dh, c.s, mode).minus(featCost(h, c.s, mode))
}
