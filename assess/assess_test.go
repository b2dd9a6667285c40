package assess

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

func TestRiskOf(t *testing.T) {
	m := matrix.New(5, 0)
	m.Append("u1", []uint32{1, 2})
	m.Append("u2", []uint32{1, 2})
	m.Append("u3", []uint32{1})
	m.Append("u4", []uint32{3})
	m.Append("u5", []uint32{1, 2, 3})
	r := RiskOf(m, []int{2, 3})
	want := Risk{Rows: 5, Entries: 9, Features: 3, Degrees: []int64{0, 2, 3}, Unique: 0.6,
		BelowK:   []KShare{{2, 0.6}, {3, 1}},
		Exposing: []FeatureCount{{Feature: 3, Rows: 1}}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("RiskOf = %+v\nwant %+v", r, want)
	}
	// An empty row makes {1} and {3} exposed by 1 and 3, beside {1,2,3} by 3.
	m.Append("u6", nil)
	r = RiskOf(m, []int{2})
	if got := r.Exposing; !reflect.DeepEqual(got, []FeatureCount{{Feature: 3, Rows: 2}, {Feature: 1, Rows: 1}}) {
		t.Fatalf("with an empty row, Exposing = %v", got)
	}
	if r.Degrees[0] != 1 || r.Unique != 4.0/6 {
		t.Fatalf("with an empty row, Degrees %v Unique %v", r.Degrees, r.Unique)
	}
}

// lists is n generated user lists.
func lists(t *testing.T, n int64) *matrix.Matrix {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.parquet")
	w, err := matrix.Create(path, matrix.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := gen.UserLists(w, gen.UserListsParams{Rows: n, Columns: 20_000, MeanDegree: 8, Zipf: 1.1, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	m, _, err := matrix.ReadMatrix(path, matrix.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// chunked is what the run does to m without pools: m in the key's
// order cut into chunks, each solved with its chunk's seed.
func chunked(t *testing.T, m *matrix.Matrix, p PriceParams, k int) Figures {
	t.Helper()
	order, err := transforms.SampleOrder(m, p.Order)
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Solver
	sp.K = k
	e := estimator{ctx: context.Background(), p: p, sp: sp}
	n := int64(m.NumRows())
	r := max(1, n/p.ChunkSize)
	var tot tally
	for j := int64(0); j < r; j++ {
		c, err := e.solve(m, order[j*n/r:(j+1)*n/r], j)
		if err != nil {
			t.Fatal(err)
		}
		tot.add(c)
	}
	return tot.figures()
}

// With the whole input as the sample, the prediction is the chunked
// solve itself, and the interval holds it.
func TestPriceWholeInput(t *testing.T) {
	m := lists(t, 4000)
	for _, chunk := range []int64{100_000, 1000} {
		p := PriceParams{Rows: 4000, ChunkSize: chunk, Order: transforms.SignatureParams{Key: transforms.KeyHub, Seed: 1}, Solver: solver.Params{Seed: 1}}
		pts, err := Price(context.Background(), m, []int{4}, []matrix.Mode{matrix.Smooth}, p)
		if err != nil {
			t.Fatal(err)
		}
		pt := pts[0]
		want := chunked(t, m, p, 4)
		if pt.Predicted != want {
			t.Errorf("chunk %d: predicted %+v, the chunked solve %+v", chunk, pt.Predicted, want)
		}
		if pt.Low.Jaccard > want.Jaccard || pt.High.Jaccard < want.Jaccard || pt.Extrapolated {
			t.Errorf("chunk %d: interval [%v, %v] extrapolated %v", chunk, pt.Low.Jaccard, pt.High.Jaccard, pt.Extrapolated)
		}
		if pt.Chunks != max(1, 4000/chunk) {
			t.Errorf("chunk %d: %d chunks", chunk, pt.Chunks)
		}
	}
}

// From a quarter of the rows, the prediction of a run of 20 chunks is
// near the chunked solve of all of them, and its interval holds it.
func TestPriceSample(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 40,000 rows several times")
	}
	m := lists(t, 40_000)
	p := PriceParams{Rows: 40_000, ChunkSize: 2000, Order: transforms.SignatureParams{Key: transforms.KeyHub, Seed: 1}, Solver: solver.Params{Seed: 1}}
	want := chunked(t, m, p, 8)
	s := matrix.New(10_000, 0)
	for i := 0; i < m.NumRows(); i += 4 {
		s.Append(m.Users[i], m.Row(i))
	}
	pts, err := Price(context.Background(), s, []int{8}, []matrix.Mode{matrix.Smooth}, p)
	if err != nil {
		t.Fatal(err)
	}
	pt := pts[0]
	t.Logf("chunked %.4f, predicted %.4f [%.4f, %.4f], sample chunks %d of %d rows", want.Jaccard, pt.Predicted.Jaccard, pt.Low.Jaccard, pt.High.Jaccard, pt.SampleChunks, pt.SampleChunkRows)
	if math.Abs(pt.Predicted.Jaccard-want.Jaccard) > 0.02 || pt.Low.Jaccard > want.Jaccard || pt.High.Jaccard < want.Jaccard {
		t.Errorf("predicted %.4f [%.4f, %.4f], chunked %.4f", pt.Predicted.Jaccard, pt.Low.Jaccard, pt.High.Jaccard, want.Jaccard)
	}
	if pt.Predicted != clamp(pt.Predicted, 8) || pt.Low.Created > pt.Predicted.Created || pt.Predicted.Created > pt.High.Created {
		t.Errorf("predicted %+v outside [%+v, %+v] or out of range", pt.Predicted, pt.Low, pt.High)
	}
	// A plain sample cut as the sample, not thinned, is far off: the
	// thinning is what makes it work.
	naive := chunked(t, s, PriceParams{Rows: 10_000, ChunkSize: 2000, Order: p.Order, Solver: p.Solver}, 8)
	t.Logf("sample cut into chunks of 2000 rows: %.4f", naive.Jaccard)
	// Pools keep a pool's release only where it raises the Jaccard.
	e := estimator{ctx: context.Background(), p: p, sp: solver.Params{K: 8, Seed: 1}}
	plain, err := e.thinned(m, 20)
	if err != nil {
		t.Fatal(err)
	}
	e.p.PoolShare = 0.4
	e.cut = nil
	pools, err := e.thinned(m, 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("20 chunks: %.4f, with pools %.4f", plain.Jaccard, pools.Jaccard)
	if pools.Jaccard <= plain.Jaccard || plain.Jaccard != want.Jaccard {
		t.Errorf("20 chunks: %.4f (chunked %.4f), with pools %.4f", plain.Jaccard, want.Jaccard, pools.Jaccard)
	}
	again, err := Price(context.Background(), s, []int{8}, []matrix.Mode{matrix.Smooth}, p)
	if err != nil || !reflect.DeepEqual(again, pts) {
		t.Errorf("a second prediction differs: %v %+v", err, again)
	}
}

func TestPriceRefuses(t *testing.T) {
	m := lists(t, 100)
	ok := PriceParams{Rows: 1000, ChunkSize: 100}
	for name, c := range map[string]struct {
		ks []int
		p  PriceParams
	}{
		"fewer rows than the sample": {[]int{2}, PriceParams{Rows: 50, ChunkSize: 100}},
		"no chunk size":              {[]int{2}, PriceParams{Rows: 1000}},
		"no k":                       {nil, ok},
		"k 1":                        {[]int{1}, ok},
		"k above a replicate":        {[]int{26}, ok},
		"one replicate":              {[]int{2}, PriceParams{Rows: 1000, ChunkSize: 100, Replicates: 1}},
	} {
		if _, err := Price(context.Background(), m, c.ks, []matrix.Mode{matrix.Smooth}, c.p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Price(context.Background(), matrix.New(0, 0), []int{2}, []matrix.Mode{matrix.Smooth}, ok); err == nil {
		t.Error("empty sample: no error")
	}
}

// TestClamp: shares stay in [0, 1], created at least 0, users per class
// at least k; clamp is monotone, so Low <= Predicted <= High survives it.
func TestClamp(t *testing.T) {
	for _, c := range []struct{ in, want Figures }{
		{Figures{0.5, 0.2, 0.1, 9}, Figures{0.5, 0.2, 0.1, 9}},
		{Figures{-0.1, -0.2, -0.004, 3}, Figures{0, 0, 0, 8}},
		{Figures{1.2, 1.5, 1.7, 8}, Figures{1, 1, 1.7, 8}},
	} {
		if got := clamp(c.in, 8); got != c.want {
			t.Errorf("clamp(%+v, 8) = %+v, want %+v", c.in, got, c.want)
		}
	}
	lo, mid, hi := Figures{-0.3, -0.1, -0.02, 2}, Figures{-0.1, 0.3, -0.004, 7}, Figures{0.2, 1.3, 0.01, 12}
	a, b, c := clamp(lo, 8), clamp(mid, 8), clamp(hi, 8)
	for _, f := range []func(Figures) float64{
		func(f Figures) float64 { return f.Jaccard }, func(f Figures) float64 { return f.Suppressed },
		func(f Figures) float64 { return f.Created }, func(f Figures) float64 { return f.ClassRows },
	} {
		if f(a) > f(b) || f(b) > f(c) {
			t.Errorf("clamp is not monotone: %+v %+v %+v", a, b, c)
		}
	}
}
