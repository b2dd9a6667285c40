// Package mondrian computes Mondrian partitions of binary rows: starting
// from all rows, a partition is cut on the feature held by a number of its
// rows closest to half (ties: the lower feature id), holders on one side,
// as long as both sides keep at least k rows. baseline.Mondrian releases
// them as a baseline; the solver refines them as one of its candidate
// clusterings.
package mondrian

import (
	"context"
	"fmt"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
)

// Partition returns the Mondrian partition of every row of m (numbered in
// the order they are found), every partition's common features, the ones
// all its rows hold (ascending ids), and the number of distinct features
// of m. k must be in [1, rows]; m's rows must be sorted (matrix.Validate).
func Partition(ctx context.Context, m *matrix.Matrix, k int) ([]int32, [][]uint32, int, error) {
	n := m.NumRows()
	if k < 1 || k > n {
		return nil, nil, 0, fmt.Errorf("mondrian: k = %d, must be in [1, %d]", k, n)
	}
	// Dense feature ids, ascending with the feature ids.
	feats := m.Columns()
	off := make([]int64, n+1)
	for i := range n {
		off[i+1] = off[i] + int64(len(m.Row(i)))
	}
	drow := make([]int32, off[n])
	for i := range n {
		for j, f := range m.Row(i) {
			d, _ := slices.BinarySearch(feats, f)
			drow[off[i]+int64(j)] = int32(d)
		}
	}
	part, common, err := partition(ctx, drow, off, len(feats), k)
	if err != nil {
		return nil, nil, 0, err
	}
	for _, c := range common {
		for i, f := range c {
			c[i] = feats[f]
		}
	}
	return part, common, len(feats), nil
}

// partition runs Mondrian's cuts on rows 0..n−1, row r holding the dense
// features drow[off[r]:off[r+1]] (ascending, below nf), and returns every
// row's partition and every partition's common features (dense ids,
// ascending).
//
// A partition's feature counts are kept in a cutCounter, which finds the
// cut closest to half in O(log n). After a cut only the smaller side's rows
// are handled: they leave the partition (their counts are taken off, so the
// larger side goes on with the counts it inherits) and are counted afresh
// when their own partition is taken from the stack. A row is on the smaller
// side at most log₂ n times, so the counting is O(entries · log n) updates,
// each O(log n). The smaller side is read from the cut feature's postings
// when it is the holders and the postings are at most twice the
// partition's rows (on sparse graphs a feature's postings are short),
// else from a scan of the partition's rows.
func partition(ctx context.Context, drow []int32, off []int64, nf, k int) ([]int32, [][]uint32, error) {
	n := len(off) - 1
	row := func(r int32) []int32 { return drow[off[r]:off[r+1]] }
	pstart := make([]int64, nf+1)
	for _, f := range drow {
		pstart[f+1]++
	}
	for f := range nf {
		pstart[f+1] += pstart[f]
	}
	post := make([]int32, len(drow))
	next := slices.Clone(pstart[:nf])
	for r := range int32(n) {
		for _, f := range row(r) {
			post[next[f]] = r
			next[f]++
		}
	}

	part := make([]int32, n)
	var common [][]uint32
	live := make([]int32, n) // the live partition's stamp on its rows
	pos := make([]int32, n)  // a live row's index in mem
	cc := newCutCounter(nf, n)
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	stack := [][]int32{all}
	stamp := int32(0)
	for steps := 0; len(stack) > 0; {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		mem := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		stamp++
		cc.reset(len(mem))
		for i, r := range mem {
			live[r], pos[r] = stamp, int32(i)
			for _, f := range row(r) {
				cc.inc(f)
			}
		}
		cc.index()
		for {
			if steps++; steps&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
			}
			s := len(mem)
			f, c := cc.bestCut(s, k)
			if f < 0 {
				id := int32(len(common))
				for _, r := range mem {
					part[r] = id
				}
				common = append(common, cc.heldByAll(s))
				break
			}
			// The smaller side; on a tie, the holders.
			holders := c <= s-c
			var small []int32
			if p := post[pstart[f]:pstart[f+1]]; holders && len(p) <= 2*s {
				for _, r := range p {
					if live[r] == stamp {
						small = append(small, r)
					}
				}
			} else {
				for _, r := range mem {
					if _, ok := slices.BinarySearch(row(r), f); ok == holders {
						small = append(small, r)
					}
				}
			}
			for _, r := range small {
				live[r] = 0
				i, last := pos[r], mem[len(mem)-1]
				mem[i], pos[last] = last, i
				mem = mem[:len(mem)-1]
				for _, g := range row(r) {
					cc.take(g)
				}
			}
			cc.settle()
			stack = append(stack, small)
		}
	}
	return part, common, nil
}

// cutCounter holds the feature counts of one partition of at most cap rows
// and finds Mondrian's cut: the feature whose count c is closest to half
// the partition's size s, with k ≤ c ≤ s−k, ties to the lower feature.
// Counts only grow while the partition is counted (inc) and only shrink
// after index, as rows leave (take, then settle).
type cutCounter struct {
	cnt     []int32 // per feature
	touched []int32 // features with a count since reset
	cap     int
	fen     []int32   // Fenwick tree over counts 1..cap: features with that count
	bucket  [][]int32 // per count, a min-heap of the features that reached it
	// was is a feature's count before the batch of takes in progress (0:
	// none taken), and taken those features.
	was   []int32
	taken []int32
}

func newCutCounter(nf, n int) *cutCounter {
	return &cutCounter{cnt: make([]int32, nf), fen: make([]int32, n+1), bucket: make([][]int32, n+1), was: make([]int32, nf)}
}

// reset empties the counter for a partition of size rows.
func (cc *cutCounter) reset(size int) {
	for _, f := range cc.touched {
		cc.cnt[f] = 0
	}
	cc.touched = cc.touched[:0]
	clear(cc.fen[:cc.cap+1])
	for c := range cc.bucket[:cc.cap+1] {
		cc.bucket[c] = cc.bucket[c][:0]
	}
	cc.cap = size
}

func (cc *cutCounter) inc(f int32) {
	if cc.cnt[f] == 0 {
		cc.touched = append(cc.touched, f)
	}
	cc.cnt[f]++
}

// index files every counted feature under its count.
func (cc *cutCounter) index() {
	for _, f := range cc.touched {
		cc.file(f, cc.cnt[f])
	}
}

func (cc *cutCounter) file(f, c int32) {
	for i := int(c); i <= cc.cap; i += i & -i {
		cc.fen[i]++
	}
	cc.bucket[c] = heapPush(cc.bucket[c], f)
}

// take takes one holder of f away; the tree and the heaps learn of it at
// settle. Rows leave in batches (a cut's smaller side) and a feature held
// by many of them is then moved once, from its count before the batch to
// its count after, instead of once per holder (see
// BenchmarkPartitionUserLists).
func (cc *cutCounter) take(f int32) {
	if cc.was[f] == 0 {
		cc.was[f] = cc.cnt[f]
		cc.taken = append(cc.taken, f)
	}
	cc.cnt[f]--
}

// settle files every feature taken since the last settle under its new
// count. Its entry in its old count's heap stays behind and is dropped
// when it surfaces (counts never come back up).
func (cc *cutCounter) settle() {
	for _, f := range cc.taken {
		for i := int(cc.was[f]); i <= cc.cap; i += i & -i {
			cc.fen[i]--
		}
		cc.was[f] = 0
		if c := cc.cnt[f]; c > 0 {
			cc.file(f, c)
		}
	}
	cc.taken = cc.taken[:0]
}

// prefix is the number of features with counts 1..c.
func (cc *cutCounter) prefix(c int) int32 {
	var s int32
	for ; c > 0; c -= c & -c {
		s += cc.fen[c]
	}
	return s
}

// nth is the smallest count whose prefix reaches t (t ≥ 1, at most the
// number of counted features).
func (cc *cutCounter) nth(t int32) int {
	c, step := 0, 1
	for step*2 <= cc.cap {
		step *= 2
	}
	for ; step > 0; step /= 2 {
		if c+step <= cc.cap && cc.fen[c+step] < t {
			c += step
			t -= cc.fen[c]
		}
	}
	return c + 1
}

// minOf is the lowest feature with count c; some feature has it.
func (cc *cutCounter) minOf(c int) int32 {
	h := cc.bucket[c]
	for cc.cnt[h[0]] != int32(c) {
		h = heapPop(h)
	}
	cc.bucket[c] = h
	return h[0]
}

// bestCut returns the cut feature and its count for a partition of s rows,
// or −1 when no feature cuts it into two sides of at least k rows.
func (cc *cutCounter) bestCut(s, k int) (int32, int) {
	h := s / 2
	lo, hi := 0, 0 // the nearest used counts at or below h and above it
	if p := cc.prefix(h); p > 0 {
		lo = cc.nth(p)
	}
	if p := cc.prefix(h); p < cc.prefix(cc.cap) {
		hi = cc.nth(p + 1)
	}
	okLo, okHi := lo >= k && lo > 0, hi > 0 && hi <= s-k
	switch {
	case okLo && okHi && s-2*lo == 2*hi-s:
		if a, b := cc.minOf(lo), cc.minOf(hi); b < a {
			return b, hi
		} else {
			return a, lo
		}
	case okLo && (!okHi || s-2*lo < 2*hi-s):
		return cc.minOf(lo), lo
	case okHi:
		return cc.minOf(hi), hi
	}
	return -1, 0
}

// heldByAll returns the features held by all s rows, ascending.
func (cc *cutCounter) heldByAll(s int) []uint32 {
	var out []uint32
	for _, f := range cc.bucket[s] {
		if cc.cnt[f] == int32(s) {
			out = append(out, uint32(f))
		}
	}
	slices.Sort(out)
	return out
}

func heapPush(h []int32, v int32) []int32 {
	h = append(h, v)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= v {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = v
	return h
}

func heapPop(h []int32) []int32 {
	last := h[len(h)-1]
	h = h[:len(h)-1]
	if len(h) == 0 {
		return h
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if last <= h[c] {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return h
}
