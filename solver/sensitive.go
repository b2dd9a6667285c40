package solver

import (
	"fmt"
	"math"
	"slices"

	"github.com/smoothanon/smoothanon/internal/mondrian"
	"github.com/smoothanon/smoothanon/matrix"
)

// Sensitive features (Params.Sensitive) follow their own release rule,
// whatever the mode: a cluster shows one only if every member held it
// (nothing is created) and the cluster has at least Params.SensitiveK
// members; under SensitiveDrop never. The rule is part of the objective,
// not applied afterwards: every cost the solver weighs (costOf, the
// cluster counts' deltas) counts a sensitive feature of a cluster of s
// members held by h of them as h suppressed entries, less s when it is
// shown (h = s and s ≥ SensitiveK).
//
// The problem numbers the sensitive features last (dense ids ≥ nfn), so
// that each sorted row ends with them and the counts of the other
// features stay those of a problem without sensitive features. Improve
// adds a start of sensitive strata (sensitiveStrata); see
// docs/decisions/029-sensitive-features.md.

// SensitivePolicy says what a release does with sensitive features.
type SensitivePolicy int

const (
	// SensitiveShow shows a sensitive feature in a class where every
	// member held it and the class has at least SensitiveK members.
	SensitiveShow SensitivePolicy = iota
	// SensitiveDrop never releases a sensitive feature.
	SensitiveDrop
)

func (p SensitivePolicy) String() string {
	switch p {
	case SensitiveShow:
		return "show"
	case SensitiveDrop:
		return "drop"
	}
	return fmt.Sprintf("SensitivePolicy(%d)", int(p))
}

// ParseSensitivePolicy parses "show" or "drop".
func ParseSensitivePolicy(s string) (SensitivePolicy, error) {
	switch s {
	case "show":
		return SensitiveShow, nil
	case "drop":
		return SensitiveDrop, nil
	}
	return 0, fmt.Errorf("invalid sensitive policy %q (want show or drop)", s)
}

// checkSensitive reports the first bad sensitive parameter.
func checkSensitive(p Params) error {
	if p.SensitiveK < 0 {
		return fmt.Errorf("sensitive_k = %d, must be at least k = %d (0 means k)", p.SensitiveK, p.K)
	}
	if p.SensitiveK != 0 && p.SensitiveK < p.K {
		return fmt.Errorf("sensitive_k = %d is smaller than k = %d", p.SensitiveK, p.K)
	}
	if p.SensitiveK > 1<<30 {
		return fmt.Errorf("sensitive_k = %d is too large", p.SensitiveK)
	}
	if p.SensitivePolicy != SensitiveShow && p.SensitivePolicy != SensitiveDrop {
		return fmt.Errorf("invalid sensitive policy %d (want show or drop)", int(p.SensitivePolicy))
	}
	for i := 1; i < len(p.Sensitive); i++ {
		if p.Sensitive[i] <= p.Sensitive[i-1] {
			return fmt.Errorf("sensitive feature %d at index %d: the list must ascend without repeats", p.Sensitive[i], i)
		}
	}
	return nil
}

// SensitiveMin is the least size of a class that may show a sensitive
// feature under p: SensitiveK (K where 0), or MaxInt32 under SensitiveDrop.
func SensitiveMin(p Params) int32 {
	if p.SensitivePolicy == SensitiveDrop {
		return math.MaxInt32
	}
	return int32(max(p.SensitiveK, p.K))
}

// sensitiveOrder renumbers dense features (orig, ascending input ids) so
// that the sensitive ones come last, each part ascending. It returns the
// new dense id of each old one and the number of other features (nil and
// len(orig) when none of orig is sensitive).
func sensitiveOrder(orig, sensitive []uint32) (perm []int32, nfn int) {
	var isSens []bool
	for f, id := range orig {
		if _, ok := slices.BinarySearch(sensitive, id); ok {
			if isSens == nil {
				isSens = make([]bool, len(orig))
			}
			isSens[f] = true
		}
	}
	if isSens == nil {
		return nil, len(orig)
	}
	perm = make([]int32, len(orig))
	for f := range orig {
		if !isSens[f] {
			perm[f] = int32(nfn)
			nfn++
		}
	}
	next := nfn
	for f := range orig {
		if isSens[f] {
			perm[f] = int32(next)
			next++
		}
	}
	return perm, nfn
}

// shown says whether a sensitive feature held by h of s members is
// released, for least class size smin (SensitiveMin).
func shown(h, s, smin int32) bool { return h == s && s >= smin }

// sensCost is the cost of a sensitive feature held by h of s members.
func sensCost(h, s, smin int32) cost {
	if shown(h, s, smin) {
		return cost{}
	}
	return cost{s: int64(h)}
}

// sstat is a cluster's counts of its sensitive features (cstat.sens).
// Their cost is T − s·#{f: h = s} suppressed entries when the cluster is
// shown (s ≥ smin), else T, for T the members' sensitive entries.
type sstat struct {
	nfn, smin int32
	h         fmap
	byH       []int32 // byH[h] = sensitive features with h holders
	t         int64   // T
}

func newSstat(nfn, smin int32) *sstat {
	return &sstat{nfn: nfn, smin: smin, byH: make([]int32, 2)}
}

func (c *sstat) at(h int32) int32 {
	if h < 1 || int(h) >= len(c.byH) {
		return 0
	}
	return c.byH[h]
}

// bump changes the holders of f by d (±1).
func (c *sstat) bump(f, d int32) {
	h := c.h.get(f)
	if h > 0 {
		c.byH[h]--
	}
	h += d
	c.h.set(f, h)
	if h > 0 {
		for int(h) >= len(c.byH) {
			c.byH = append(c.byH, 0)
		}
		c.byH[h]++
	}
	c.t += int64(d)
}

// shownAt is s·#{f: h = s} where a cluster of s members is shown, else 0.
func (c *sstat) shownAt(s int32) int64 {
	if s < c.smin || s < 1 {
		return 0
	}
	return int64(s) * int64(c.at(s))
}

// total is the cost of the sensitive features of a cluster of s members.
func (c *sstat) total(s int32) cost { return cost{s: c.t - c.shownAt(s)} }

// deltaIn is the change of cost of a member with sensitive features row
// joining a cluster of s members: after it, the features shown are those
// of row that all s held.
func (c *sstat) deltaIn(row []int32, s int32) cost {
	all := int64(0)
	for _, f := range row {
		if c.h.get(f) == s {
			all++
		}
	}
	after := int64(0)
	if s+1 >= c.smin {
		after = int64(s+1) * all
	}
	return cost{s: int64(len(row)) - after + c.shownAt(s)}
}

// deltaOut is the change of cost of a member with sensitive features row
// leaving a cluster of s members: after it, the features shown are those
// all s held and those the other s − 1 held without the member.
func (c *sstat) deltaOut(row []int32, s int32) cost {
	all := int64(c.at(s)) + int64(c.at(s-1))
	for _, f := range row {
		if c.h.get(f) == s-1 {
			all--
		}
	}
	after := int64(0)
	if s-1 >= c.smin && s > 1 {
		after = int64(s-1) * all
	}
	return cost{s: -int64(len(row)) - after + c.shownAt(s)}
}

// deltaHolder is the change of f's cost when its holders change by dh
// (±1) in a cluster of s members that keeps its size.
func (c *sstat) deltaHolder(f, dh, s int32) cost {
	h := c.h.get(f)
	return sensCost(h+dh, s, c.smin).minus(sensCost(h, s, c.smin))
}

// SuppressSensitive applies p's sensitive rule to a release made without
// it: each row of rel (the release of in, row for row) keeps a sensitive
// feature only where every member of its cluster (cluster, as
// Result.Cluster) held it and the cluster has SensitiveMin(p) members. It
// is the post-processing baseline the solver's own handling is measured
// against; rel is not modified.
func SuppressSensitive(in, rel *matrix.Matrix, cluster []int32, p Params) *matrix.Matrix {
	type key struct {
		c int32
		f uint32
	}
	size := map[int32]int32{}
	for _, c := range cluster {
		size[c]++
	}
	held := map[key]int32{}
	for r := range in.NumRows() {
		for _, f := range in.Row(r) {
			if _, ok := slices.BinarySearch(p.Sensitive, f); ok {
				held[key{cluster[r], f}]++
			}
		}
	}
	smin := SensitiveMin(p)
	out := matrix.New(rel.NumRows(), len(rel.Features))
	for r := range rel.NumRows() {
		c := cluster[r]
		for _, f := range rel.Row(r) {
			if _, ok := slices.BinarySearch(p.Sensitive, f); ok && !shown(held[key{c, f}], size[c], smin) {
				continue
			}
			out.Features = append(out.Features, f)
		}
		out.Users = append(out.Users, rel.Users[r])
		out.Offsets = append(out.Offsets, int64(len(out.Features)))
	}
	return out
}

// sensitiveStrata is improve's start for sensitive features: users
// grouped by their sensitive features, each group of at least
// SensitiveMin users holding some partitioned by Mondrian into parts of
// that size (each part shows all of the group's sensitive features), the
// other users together into parts of K. nil where no group is that
// large (the plain Mondrian candidate covers it).
func (s *state) sensitiveStrata() ([][]int32, error) {
	pr := s.pr
	if pr.nfn == int32(pr.nf) || pr.smin == math.MaxInt32 {
		return nil, nil
	}
	bySig := map[string][]int32{}
	var sigs []string // in order of first user
	key := make([]byte, 0, 64)
	for u := range int32(pr.n) {
		row := pr.urow(u)
		i := len(row)
		for i > 0 && row[i-1] >= pr.nfn {
			i--
		}
		key = key[:0]
		for _, f := range row[i:] {
			key = append(key, byte(f), byte(f>>8), byte(f>>16), byte(f>>24))
		}
		if _, ok := bySig[string(key)]; !ok {
			sigs = append(sigs, string(key))
		}
		bySig[string(key)] = append(bySig[string(key)], u)
	}
	var strata [][]int32
	var rest []int32
	for _, sig := range sigs {
		if mem := bySig[sig]; sig != "" && int32(len(mem)) >= pr.smin {
			strata = append(strata, mem)
		} else {
			rest = append(rest, mem...)
		}
	}
	if len(strata) == 0 {
		return nil, nil
	}
	if len(rest) > 0 && len(rest) < s.p.K { // too few to form a part: join a stratum
		strata[0] = append(strata[0], rest...)
		rest = nil
	}
	var out [][]int32
	add := func(mem []int32, k int) error {
		order := make([]int, len(mem))
		for i, u := range mem {
			order[i] = int(u)
		}
		part, common, _, err := mondrian.Partition(s.ctx, s.canon.Permute(order), k)
		if err != nil {
			return err
		}
		base := len(out)
		out = append(out, make([][]int32, len(common))...)
		for i, c := range part {
			out[base+int(c)] = append(out[base+int(c)], mem[i])
		}
		return nil
	}
	for _, mem := range strata {
		if err := add(mem, int(pr.smin)); err != nil {
			return nil, err
		}
	}
	if len(rest) > 0 {
		if err := add(rest, s.p.K); err != nil {
			return nil, err
		}
	}
	return out, nil
}
