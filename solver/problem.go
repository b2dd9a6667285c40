package solver

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

// problem is the input in canonical order, with identical rows merged into
// weighted points and feature ids renumbered densely (order preserved).
type problem struct {
	n, np, nf int
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
}

func (pr *problem) row(p int32) []int32 { return pr.feat[pr.off[p]:pr.off[p+1]] }
func (pr *problem) deg(p int32) int32   { return pr.off[p+1] - pr.off[p] }
func (pr *problem) users(p int32) []int32 {
	return pr.puList[pr.puOff[p]:pr.puOff[p+1]]
}

// urow is the dense row of canonical user u.
func (pr *problem) urow(u int32) []int32 { return pr.row(pr.userPoint[u]) }

// newProblem prepares m with its rows in the given order (nil: as they
// are).
func newProblem(m *matrix.Matrix, order []int32) *problem {
	if order == nil {
		order = make([]int32, m.NumRows())
		for i := range order {
			order[i] = int32(i)
		}
	}
	n := len(order)
	pr := &problem{n: n, userPoint: make([]int32, n)}
	pr.orig = slices.Clone(m.Features)
	slices.Sort(pr.orig)
	pr.orig = slices.Compact(pr.orig)
	pr.nf = len(pr.orig)

	index := make(map[string]int32)
	pr.off = append(pr.off, 0)
	for u, r := range order {
		row := m.Row(int(r))
		var key string
		if len(row) > 0 {
			key = unsafe.String((*byte)(unsafe.Pointer(&row[0])), 4*len(row))
		}
		p, ok := index[key]
		if !ok {
			p = int32(len(pr.w))
			index[key] = p
			pr.w = append(pr.w, 0)
			for _, f := range row {
				d, _ := slices.BinarySearch(pr.orig, f)
				pr.feat = append(pr.feat, int32(d))
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
	pr.byDeg = make([]int32, pr.np)
	for p := range pr.byDeg {
		pr.byDeg[p] = int32(p)
	}
	slices.SortStableFunc(pr.byDeg, func(a, b int32) int { return int(pr.deg(a) - pr.deg(b)) })
	return pr
}

func workers(w int) int {
	if w <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return w
}

// parallel runs fn(lo, hi, worker) over [0, n) in chunks on w goroutines.
func parallel(n, chunk, w int, fn func(lo, hi, worker int)) {
	if w <= 1 || n <= chunk {
		fn(0, n, 0)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				fn(lo, min(lo+chunk, n), k)
			}
		}(k)
	}
	wg.Wait()
}

// centre returns the released row (input feature ids, sorted) of a cluster.
func (pr *problem) centre(members []int32, mode verify.Mode) []uint32 {
	cnt := make(map[int32]int32)
	for _, u := range members {
		for _, f := range pr.urow(u) {
			cnt[f]++
		}
	}
	s := int32(len(members))
	var out []uint32
	for f, h := range cnt {
		if keep(h, s, mode) {
			out = append(out, pr.orig[f])
		}
	}
	slices.Sort(out)
	return out
}

// keep says whether a feature held by h of s users is released.
func keep(h, s int32, mode verify.Mode) bool {
	if mode == verify.NonSmooth {
		return h == s
	}
	return 2*h >= s
}

// featCost is the number of changed entries of a feature held by h of s.
func featCost(h, s int32, mode verify.Mode) int64 {
	if mode == verify.NonSmooth {
		if h == s {
			return 0
		}
		return int64(h)
	}
	return int64(min(h, s-h))
}

// costOf is the number of changed entries when members form one cluster.
// cnt is zeroed scratch of length nf; it is left zeroed.
func (pr *problem) costOf(members []int32, mode verify.Mode, cnt []int32, touched *[]int32) int64 {
	for _, u := range members {
		for _, f := range pr.urow(u) {
			if cnt[f] == 0 {
				*touched = append(*touched, f)
			}
			cnt[f]++
		}
	}
	s := int32(len(members))
	var c int64
	for _, f := range *touched {
		c += featCost(cnt[f], s, mode)
		cnt[f] = 0
	}
	*touched = (*touched)[:0]
	return c
}
