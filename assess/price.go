package assess

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/smoothanon/smoothanon/lsh"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

// PriceParams configure Price.
type PriceParams struct {
	// Rows is the number of rows (users) of the whole input the sample
	// stands for. Required; at least the sample's rows.
	Rows int64
	// ChunkSize is the run's target rows per chunk (pipeline.Params
	// ChunkSize). Required; at least 1.
	ChunkSize int64
	// Order orders the sample as the run's chunk key orders the input
	// (transforms.SampleOrder). Optional; default the spectral key; not
	// KeyAuto.
	Order transforms.SignatureParams
	// Solver is the run's solver settings; Price sets K and Mode for
	// every point. Optional; default solver.Params's defaults.
	Solver solver.Params
	// PoolShare is the run's share of every chunk solved again in pools
	// (pipeline.Params.PoolShare), simulated on the sample's chunks.
	// Optional; default 0 (no pools).
	PoolShare float64
	// Replicates is the number of disjoint parts of the sample the
	// prediction is made again from, for its interval. Optional; default
	// DefaultReplicates (0 means default); at least 2.
	Replicates int
}

// DefaultReplicates is PriceParams.Replicates' default.
const DefaultReplicates = 4

// minChunkPerK is the fewest rows per k of a thinned chunk the
// prediction solves; with fewer, the chunk term is extrapolated.
const minChunkPerK = 32

// Figures are one release's utility and its cost, as fractions of the
// input's entries: Jaccard of input and release edge sets, entries
// suppressed and entries created, and the mean rows per class.
type Figures struct {
	Jaccard    float64 `json:"jaccard"`
	Suppressed float64 `json:"suppressed"`
	Created    float64 `json:"created"`
	ClassRows  float64 `json:"class_rows"`
}

func (a Figures) add(b Figures, w float64) Figures {
	return Figures{a.Jaccard + w*b.Jaccard, a.Suppressed + w*b.Suppressed, a.Created + w*b.Created, a.ClassRows + w*b.ClassRows}
}

// Point is the predicted price of one k and mode.
type Point struct {
	K    int         `json:"k"`
	Mode matrix.Mode `json:"-"`
	// ModeName is Mode's flag name (smooth or nonsmooth).
	ModeName string `json:"mode"`
	// Predicted is the prediction from the whole sample; Low and High
	// bound it (see Price).
	Predicted Figures `json:"predicted"`
	Low       Figures `json:"low"`
	High      Figures `json:"high"`
	// Chunks is the number of chunks the run will cut; SampleChunks the
	// number the sample was cut into, and SampleChunkRows their rows.
	Chunks          int64 `json:"chunks"`
	SampleChunks    int64 `json:"sample_chunks"`
	SampleChunkRows int64 `json:"sample_chunk_rows"`
	// Extrapolated says a term came from a fit beyond what was solved:
	// the chunk size (sample smaller than a chunk) or the thinning
	// (thinned chunks too small).
	Extrapolated bool `json:"extrapolated"`
	// Model is how the prediction was made: "additive" (the chunk size's
	// term plus the order's) or "rate" (thinned chunks extrapolated in the
	// sampling rate), whichever predicted the sample itself better from
	// half of it; Backtest holds that prediction's errors.
	Model    string  `json:"model"`
	Backtest Figures `json:"backtest"`
	// Noise is how far the sample's chunked solve moved under other
	// seeds and row orders (twice it is in the interval).
	Noise Figures `json:"noise"`
}

// Price predicts, from sample (rows drawn evenly from an input of
// p.Rows rows), the release `smoothanon run` makes of that input at each
// k of ks and mode of modes.
//
// A chunk of the run holds ChunkSize rows that are neighbours in the
// chunk key's order of all p.Rows rows; a random sample's rows are not
// (a chunk of sampled rows spans p.Rows/len(sample) times as much of the
// order). The sample is cut in the same order into as many chunks as
// the run will cut (thinned chunks: each spans one chunk's part of the
// order, with fewer rows), and solved. The prediction is
//
//	whole(ChunkSize) + thinned(r) − whole(sample/r)
//
// where whole(n) is the solve of n sampled rows at once (a chunk's size
// effect), thinned(r) the sample cut into r chunks, and r the run's
// number of chunks: the run's Jaccard taken apart into the chunk size's
// term and the order's (docs/decisions/027-price-from-thinned-chunks.md
// shows both terms and their sum on data). A term beyond what was
// solved (a chunk larger than the sample; thinned chunks of fewer than
// 32k rows) is fitted in the logarithm of its size and marked
// Extrapolated. With the whole input as the sample (len(sample) ==
// p.Rows) the prediction is the chunked solve itself.
//
// Of the two ways to predict (additive, above, and rate: the thinned
// chunks of half and all of the sample, extrapolated in the logarithm of
// the rows to the input's), the one that predicts the sample itself, cut
// into the run's chunks, better from half of it is used (Point.Model).
// Low and High: that backtest's error grown by log2(Rows/len(sample))
// halvings, plus twice how far the sample's chunked solve moves under
// other seeds and row orders, plus 1.96 standard errors of the prediction made again from
// p.Replicates disjoint parts of the sample (by a hash of the user id).
// With PoolShare, every cut of the sample into chunks runs its pools as
// the Pool stage does; the spectral key's Sharpen round is not run. The
// result depends only on the sample, p, ks and modes.
func Price(ctx context.Context, sample *matrix.Matrix, ks []int, modes []matrix.Mode, p PriceParams) ([]Point, error) {
	if err := checkPrice(sample, ks, modes, p); err != nil {
		return nil, err
	}
	if p.Replicates == 0 {
		p.Replicates = DefaultReplicates
	}
	reps := split(sample, p.Replicates)
	var pts []Point
	for _, mode := range modes {
		for _, k := range ks {
			pt, err := pricePoint(ctx, sample, reps, k, mode, p)
			if err != nil {
				return nil, err
			}
			pts = append(pts, pt)
		}
	}
	return pts, nil
}

func checkPrice(sample *matrix.Matrix, ks []int, modes []matrix.Mode, p PriceParams) error {
	n := int64(sample.NumRows())
	switch {
	case n == 0:
		return errors.New("price: empty sample")
	case p.Rows < n:
		return fmt.Errorf("price: input rows %d, fewer than the sample's %d", p.Rows, n)
	case p.ChunkSize < 1:
		return fmt.Errorf("price: chunk size %d, want at least 1", p.ChunkSize)
	case len(ks) == 0 || len(modes) == 0:
		return errors.New("price: no k or no mode to price")
	case p.Replicates < 0 || p.Replicates == 1:
		return fmt.Errorf("price: %d replicates, want at least 2 (0 means %d)", p.Replicates, DefaultReplicates)
	}
	for _, k := range ks {
		if k < 2 || int64(k) > n/int64(max(2, p.Replicates)) {
			return fmt.Errorf("price: k = %d, want 2..%d for a sample of %d rows in %d replicates", k, n/int64(max(2, p.Replicates)), n, max(2, p.Replicates))
		}
	}
	return nil
}

func pricePoint(ctx context.Context, sample *matrix.Matrix, reps []*matrix.Matrix, k int, mode matrix.Mode, p PriceParams) (Point, error) {
	sp := p.Solver
	sp.K, sp.Mode = k, mode
	e := estimator{ctx: ctx, p: p, sp: sp}
	m, bt, err := e.backtest(sample)
	if err != nil {
		return Point{}, err
	}
	noise, err := e.noise(sample)
	if err != nil {
		return Point{}, err
	}
	pt, _, err := e.estimate(sample, p.Rows, p.ChunkSize, m)
	if err != nil {
		return Point{}, err
	}
	var mean, sq Figures
	n := 0
	for _, r := range reps {
		q, ok, err := e.estimate(r, p.Rows, p.ChunkSize, m)
		if err != nil {
			return Point{}, err
		}
		if ok {
			mean = mean.add(q.Predicted, 1)
			sq = sq.add(square(q.Predicted), 1)
			n++
		}
	}
	// The backtest's error grows with the distance extrapolated: one
	// halving there, log2(rows/sample) here.
	far := max(1, math.Log2(float64(p.Rows)/float64(sample.NumRows())))
	half := func(mean, sq, bt, noise float64) float64 {
		w := bt*far + 2*noise
		if n >= 2 {
			mean, sq = mean/float64(n), sq/float64(n)
			w += 1.96 * math.Sqrt(max(0, sq-mean*mean)*float64(n)/float64(n-1)) / math.Sqrt(float64(n))
		}
		return w
	}
	w := Figures{
		half(mean.Jaccard, sq.Jaccard, bt.Jaccard, noise.Jaccard),
		half(mean.Suppressed, sq.Suppressed, bt.Suppressed, noise.Suppressed),
		half(mean.Created, sq.Created, bt.Created, noise.Created),
		half(mean.ClassRows, sq.ClassRows, bt.ClassRows, noise.ClassRows),
	}
	// Clamped alike (clamp is monotone), Low <= Predicted <= High stays.
	pt.Low, pt.High, pt.Backtest, pt.Noise = clamp(pt.Predicted.add(w, -1), k), clamp(pt.Predicted.add(w, 1), k), bt, noise
	pt.Predicted = clamp(pt.Predicted, k)
	pt.K, pt.Mode, pt.ModeName = k, mode, mode.String()
	return pt, nil
}

// noise is how far the sample's cut into the run's chunks moves when the
// solves are seeded otherwise and given their rows in the reverse order:
// the part of the run's result that no sample predicts (the run orders
// a chunk's rows by key and a pool's by user).
func (e *estimator) noise(sample *matrix.Matrix) (Figures, error) {
	n := int64(sample.NumRows())
	chunks := min(max(1, e.p.Rows/e.p.ChunkSize), max(1, n/int64(minChunkPerK*e.sp.K)))
	a, err := e.thinned(sample, chunks)
	if err != nil {
		return Figures{}, err
	}
	other := estimator{ctx: e.ctx, p: e.p, sp: e.sp, reverse: true}
	other.sp.Seed = ^e.sp.Seed
	b, err := other.thinned(sample, chunks)
	return abs(a.add(b, -1)), err
}

func abs(d Figures) Figures {
	return Figures{math.Abs(d.Jaccard), math.Abs(d.Suppressed), math.Abs(d.Created), math.Abs(d.ClassRows)}
}

// backtest has each model predict, from half of sample, the sample
// itself cut into the run's number of chunks (at most one per 32k rows),
// and returns the model that came nearer in Jaccard with its errors.
func (e *estimator) backtest(sample *matrix.Matrix) (model, Figures, error) {
	n := int64(sample.NumRows())
	chunks := min(max(1, e.p.Rows/e.p.ChunkSize), max(1, n/int64(minChunkPerK*e.sp.K)))
	truth, err := e.thinned(sample, chunks)
	if err != nil {
		return 0, Figures{}, err
	}
	half := e.subsample(sample, n/2)
	best, bestErr := additive, Figures{Jaccard: math.Inf(1)}
	for _, m := range []model{additive, rate} {
		q, ok, err := e.estimate(half, n, n/chunks, m)
		if err != nil {
			return 0, Figures{}, err
		}
		if !ok {
			continue
		}
		d := abs(q.Predicted.add(truth, -1))
		if d.Jaccard < bestErr.Jaccard {
			best, bestErr = m, d
		}
	}
	return best, bestErr, nil
}

// clamp keeps f's figures where they can be: shares of entries in
// [0, 1] (created at least 0), users per class at least k.
func clamp(f Figures, k int) Figures {
	in01 := func(x float64) float64 { return min(1, max(0, x)) }
	return Figures{in01(f.Jaccard), in01(f.Suppressed), max(0, f.Created), max(float64(k), f.ClassRows)}
}

func square(f Figures) Figures {
	return Figures{f.Jaccard * f.Jaccard, f.Suppressed * f.Suppressed, f.Created * f.Created, f.ClassRows * f.ClassRows}
}

// split deals the rows of m into n parts by a hash of the user id.
func split(m *matrix.Matrix, n int) []*matrix.Matrix {
	parts := make([]*matrix.Matrix, n)
	for i := range parts {
		parts[i] = matrix.New(m.NumRows()/n+1, 0)
	}
	for i, u := range m.Users {
		f := fnv.New64a()
		f.Write([]byte(u))
		h := lsh.Mix64(f.Sum64() ^ 0x2545F4914F6CDD1D)
		parts[h%uint64(n)].Append(u, m.Row(i))
	}
	return parts
}
