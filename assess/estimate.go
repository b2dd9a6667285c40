package assess

import (
	"context"
	"math"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
	"github.com/smoothanon/smoothanon/verify"
)

// tally counts a release against its input: entries in both, in either,
// in the input, in the release; rows and classes.
type tally struct {
	inter, union, in, out, rows, classes int64
}

func (t *tally) add(o tally) {
	t.inter += o.inter
	t.union += o.union
	t.in += o.in
	t.out += o.out
	t.rows += o.rows
	t.classes += o.classes
}

func (t tally) figures() Figures {
	var f Figures
	if t.union > 0 {
		f.Jaccard = float64(t.inter) / float64(t.union)
	}
	if t.in > 0 {
		f.Suppressed = float64(t.in-t.inter) / float64(t.in)
		f.Created = float64(t.out-t.inter) / float64(t.in)
	}
	if t.classes > 0 {
		f.ClassRows = float64(t.rows) / float64(t.classes)
	}
	return f
}

// estimator makes one prediction (see Price) from one sample.
type estimator struct {
	ctx context.Context
	p   PriceParams
	sp  solver.Params
	// cut caches thinned's figures by sample and chunks.
	cut map[cutKey]Figures
	// sub caches subsample's matrices by sample and rows: a subsample made
	// twice meets cut's figures of the first.
	sub map[cutKey]*matrix.Matrix
	// reverse hands the solver every chunk's rows in the reverse order.
	reverse bool
}

type cutKey struct {
	s *matrix.Matrix
	r int64
}

// model is one way of predicting the run from a sample (see Price).
type model int

const (
	additive model = iota // the chunk size's term plus the order's
	rate                  // thinned chunks extrapolated in the sampling rate
)

var modelNames = []string{additive: "additive", rate: "rate"}

func (m model) String() string { return modelNames[m] }

// estimate predicts, from s, the run of rows rows in chunks of chunkSize
// under model m. ok is false when m cannot be made from s (rate: the
// thinned chunks of half of s would be smaller than 32k rows).
func (e *estimator) estimate(s *matrix.Matrix, rows, chunkSize int64, m model) (pt Point, ok bool, err error) {
	if m == rate {
		return e.estimateRate(s, rows, chunkSize)
	}
	pt, err = e.estimateAdditive(s, rows, chunkSize)
	return pt, err == nil, err
}

// thinned solves s in its chunk order cut into r chunks, then, with
// PoolShare, their pools as the Pool stage does (each chunk's
// worst-served clusters solved again with its neighbours', the pool's
// release kept where it raises the Jaccard), and tallies the result.
func (e *estimator) thinned(s *matrix.Matrix, r int64) (Figures, error) {
	if f, ok := e.cut[cutKey{s, r}]; ok {
		return f, nil
	}
	order, err := transforms.SampleOrder(s, e.p.Order)
	if err != nil {
		return Figures{}, err
	}
	n := int64(s.NumRows())
	var t tally
	pools := map[int64]*pooled{}
	var ids []int64
	for j := int64(0); j < r; j++ {
		rows := order[j*n/r : (j+1)*n/r]
		if e.reverse {
			rows = slices.Clone(rows)
			slices.Reverse(rows)
		}
		m := pick(s, rows)
		res, err := e.solveRows(m, transforms.ChunkSeed(e.sp.Seed, j))
		if err != nil {
			return Figures{}, err
		}
		var aside []int
		if r > 1 && e.p.PoolShare > 0 {
			aside = transforms.SetAside(m, res.Release, res.Cluster, e.p.PoolShare)
		}
		t.add(count(m, res.Release, res.Cluster, without(m.NumRows(), aside)))
		if len(aside) == 0 {
			continue
		}
		id := transforms.PoolOfChunk(j, r, e.p.PoolShare)
		pl := pools[id]
		if pl == nil {
			pl = &pooled{in: matrix.New(0, 0), first: matrix.New(0, 0)}
			pools[id] = pl
			ids = append(ids, id)
		}
		pl.add(m, res, aside, j)
	}
	for _, id := range ids {
		c, err := e.pool(pools[id], id)
		if err != nil {
			return Figures{}, err
		}
		t.add(c)
	}
	if e.cut == nil {
		e.cut = map[cutKey]Figures{}
	}
	e.cut[cutKey{s, r}] = t.figures()
	return t.figures(), nil
}

// pooled is one pool's set-aside rows: their input, first release and
// clusters (numbered apart per chunk), and the chunks they came from.
type pooled struct {
	in, first *matrix.Matrix
	cluster   []int32
	chunks    int64
	last      int64
	next      int32
}

func (p *pooled) add(m *matrix.Matrix, res *solver.Result, rows []int, chunk int64) {
	if p.chunks == 0 || p.last != chunk {
		p.chunks++
		p.last = chunk
	}
	base, top := p.next, p.next
	for _, i := range rows {
		p.in.Append(m.Users[i], m.Row(i))
		p.first.Append(m.Users[i], res.Release.Row(i))
		p.cluster = append(p.cluster, base+res.Cluster[i])
		top = max(top, base+res.Cluster[i]+1)
	}
	p.next = top
}

// pool solves a pool of more than one chunk and tallies the release Pool
// keeps: the pool's own where it suppresses no more entries and changes
// fewer (transforms' raises), else the first.
func (e *estimator) pool(p *pooled, id int64) (tally, error) {
	all := without(p.in.NumRows(), nil)
	first := count(p.in, p.first, p.cluster, all)
	if p.chunks < 2 {
		return first, nil
	}
	res, err := e.solveRows(p.in, transforms.PoolSeed(e.sp.Seed, id))
	if err != nil {
		return tally{}, err
	}
	after := count(p.in, res.Release, res.Cluster, all)
	ds := (after.in - after.inter) - (first.in - first.inter)
	dc := (after.out - after.inter) - (first.out - first.inter)
	if ds <= 0 && ds+dc < 0 {
		return after, nil
	}
	return first, nil
}

// without is the rows 0..n-1 not in drop (ascending).
func without(n int, drop []int) []int {
	rows := make([]int, 0, n-len(drop))
	j := 0
	for i := 0; i < n; i++ {
		if j < len(drop) && drop[j] == i {
			j++
			continue
		}
		rows = append(rows, i)
	}
	return rows
}

// pick is the rows idx of s as a matrix.
func pick(s *matrix.Matrix, idx []int) *matrix.Matrix {
	m := matrix.New(len(idx), 0)
	for _, i := range idx {
		m.Append(s.Users[i], s.Row(i))
	}
	return m
}

// subsample is rows rows of s, evenly spread: s itself for all of them,
// and one matrix for each s and rows.
func (e *estimator) subsample(s *matrix.Matrix, rows int64) *matrix.Matrix {
	if rows >= int64(s.NumRows()) {
		return s
	}
	if m, ok := e.sub[cutKey{s, rows}]; ok {
		return m
	}
	if e.sub == nil {
		e.sub = map[cutKey]*matrix.Matrix{}
	}
	m := pick(s, spread(int64(s.NumRows()), rows))
	e.sub[cutKey{s, rows}] = m
	return m
}

// estimateRate cuts s and half of s into the run's chunks and draws
// the line through their figures in the logarithm of the rows to the
// input's rows: the thinning undone at the rate it changes where the
// sample ends (on graph-like data that rate grows with the rows, so a
// line through smaller samples falls short). With s the whole input it
// is the chunked solve of s.
func (e *estimator) estimateRate(s *matrix.Matrix, rows, chunkSize int64) (Point, bool, error) {
	n := int64(s.NumRows())
	chunks := max(1, rows/chunkSize)
	pt := Point{Chunks: chunks, SampleChunks: chunks, SampleChunkRows: n / chunks, Model: rate.String()}
	if n == rows {
		f, err := e.thinned(s, chunks)
		pt.Predicted = f
		return pt, err == nil, err
	}
	if n/2/chunks < int64(minChunkPerK*e.sp.K) {
		return pt, false, nil
	}
	var xs []float64
	var ys []Figures
	for _, m := range []int64{n / 2, n} {
		f, err := e.thinned(e.subsample(s, m), chunks)
		if err != nil {
			return pt, false, err
		}
		xs, ys = append(xs, math.Log(float64(m))), append(ys, f)
	}
	pt.Predicted, pt.Extrapolated = fitAt(xs, ys, math.Log(float64(rows))), true
	return pt, true, nil
}

func (e *estimator) estimateAdditive(s *matrix.Matrix, rows, chunkSize int64) (Point, error) {
	n := int64(s.NumRows())
	chunks := max(1, rows/chunkSize) // as transforms.Chunk cuts
	pt := Point{Chunks: chunks, Model: additive.String()}
	whole := map[int64]Figures{} // whole solves of n sampled rows, by n
	solveWhole := func(rows int64) (Figures, error) {
		if f, ok := whole[rows]; ok {
			return f, nil
		}
		t, err := e.solve(s, spread(n, rows), 0)
		whole[rows] = t.figures()
		return whole[rows], err
	}
	// The chunk size's term: a whole solve of a chunk's rows.
	size, ext, err := e.sized(rows/chunks, n, solveWhole)
	if err != nil {
		return Point{}, err
	}
	pt.Extrapolated = ext
	if chunks == 1 {
		pt.Predicted, pt.SampleChunks, pt.SampleChunkRows = size, 1, min(n, rows)
		return pt, nil
	}
	// The order's term: the sample in the run's chunk order, thinned
	// chunks against a whole solve of as many rows.
	term := func(r int64) (Figures, error) {
		if r <= 1 {
			return Figures{}, nil
		}
		t, err := e.thinned(s, r)
		if err != nil {
			return Figures{}, err
		}
		w, err := solveWhole(n / r)
		return t.add(w, -1), err
	}
	least := int64(minChunkPerK * e.sp.K)
	if n/chunks >= least {
		h, err := term(chunks)
		pt.Predicted, pt.SampleChunks, pt.SampleChunkRows = size.add(h, 1), chunks, n/chunks
		return pt, err
	}
	// Thinned chunks this small say little: the term at the most chunks
	// of least rows, and at a quarter as many, fitted in log chunks.
	r1 := max(1, n/least)
	r0 := max(1, r1/4)
	h1, err := term(r1)
	if err != nil {
		return Point{}, err
	}
	h0, err := term(r0)
	if err != nil {
		return Point{}, err
	}
	h := h1
	if r1 > r0 {
		h = h1.add(h1.add(h0, -1), math.Log(float64(chunks)/float64(r1))/math.Log(float64(r1)/float64(r0)))
	}
	pt.Predicted, pt.SampleChunks, pt.SampleChunkRows, pt.Extrapolated = size.add(h, 1), r1, n/r1, true
	return pt, nil
}

// sized is the whole solve of rows rows of a sample of n: solved when
// the sample holds them, else fitted in the logarithm of the size to
// the solves of n/4, n/2 and n rows (those of at least 4k rows).
func (e *estimator) sized(rows, n int64, whole func(int64) (Figures, error)) (Figures, bool, error) {
	if rows <= n {
		f, err := whole(rows)
		return f, false, err
	}
	var xs []float64
	var ys []Figures
	for _, m := range []int64{n / 4, n / 2, n} {
		if m < int64(4*e.sp.K) {
			continue
		}
		f, err := whole(m)
		if err != nil {
			return Figures{}, true, err
		}
		xs, ys = append(xs, math.Log(float64(m))), append(ys, f)
	}
	if len(ys) == 0 {
		f, err := whole(n)
		return f, true, err
	}
	return fitAt(xs, ys, math.Log(float64(rows))), true, nil
}

// fitAt is the least-squares line through (xs, ys), each figure apart,
// at x (the mean of ys when xs holds one point).
func fitAt(xs []float64, ys []Figures, x float64) Figures {
	var mx float64
	var my Figures
	for i := range xs {
		mx += xs[i] / float64(len(xs))
		my = my.add(ys[i], 1/float64(len(xs)))
	}
	var sxx float64
	var sxy Figures
	for i := range xs {
		d := xs[i] - mx
		sxx += d * d
		sxy = sxy.add(ys[i].add(my, -1), d)
	}
	if sxx == 0 {
		return my
	}
	return my.add(sxy, (x-mx)/sxx)
}

// spread is rows row numbers evenly spread over 0..n-1.
func spread(n, rows int64) []int {
	idx := make([]int, rows)
	for i := range idx {
		idx[i] = int(int64(i) * n / rows)
	}
	return idx
}

// solve solves the rows idx of s as one chunk, seeded as the run seeds
// chunk number chunk, and tallies its release.
func (e *estimator) solve(s *matrix.Matrix, idx []int, chunk int64) (tally, error) {
	m := pick(s, idx)
	res, err := e.solveRows(m, transforms.ChunkSeed(e.sp.Seed, chunk))
	if err != nil {
		return tally{}, err
	}
	return count(m, res.Release, res.Cluster, without(m.NumRows(), nil)), nil
}

// solveRows solves m with the solver settings and seed.
func (e *estimator) solveRows(m *matrix.Matrix, seed int64) (*solver.Result, error) {
	sp := e.sp
	sp.Seed = seed
	return solver.Solve(e.ctx, m, sp)
}

// count tallies the rows of in and its release out: entries, rows and
// the clusters they fall in.
func count(in, out *matrix.Matrix, cluster []int32, rows []int) tally {
	t := tally{rows: int64(len(rows))}
	seen := map[int32]bool{}
	for _, i := range rows {
		a, b := in.Row(i), out.Row(i)
		c := int64(verify.CountCommon(a, b))
		t.inter += c
		t.union += int64(len(a)+len(b)) - c
		t.in += int64(len(a))
		t.out += int64(len(b))
		if !seen[cluster[i]] {
			seen[cluster[i]] = true
			t.classes++
		}
	}
	return t
}
