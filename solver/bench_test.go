package solver

import (
	"context"
	"flag"
	"fmt"
	"math"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

var userListsMax = flag.Int64("userlists_max", 1e5, "largest BenchmarkUserLists size to run")

// loadDataset returns a shared real data set (see internal/datasets; the
// test is skipped when it is absent) or, for "sbm", the paper's SBM.
func loadDataset(tb testing.TB, name string) *matrix.Matrix {
	tb.Helper()
	if name == "sbm" {
		m, err := gen.SBM(gen.PaperSBM(1))
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
	return datasets.ForTest(tb, name)
}

func benchSolve(b *testing.B, name string, mode matrix.Mode, v Variant) {
	m := loadDataset(b, name)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Solve(context.Background(), m, Params{K: 8, Mode: mode, Seed: int64(i), Variant: v}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.NumRows()), "ns/row")
}

func BenchmarkAdultSmooth(b *testing.B)    { benchSolve(b, "adult", matrix.Smooth, Improved) }
func BenchmarkAdultNonSmooth(b *testing.B) { benchSolve(b, "adult", matrix.NonSmooth, Improved) }
func BenchmarkAdultPaper(b *testing.B)     { benchSolve(b, "adult", matrix.Smooth, Paper) }
func BenchmarkSBMSmooth(b *testing.B)      { benchSolve(b, "sbm", matrix.Smooth, Improved) }
func BenchmarkDBLPSmooth(b *testing.B)     { benchSolve(b, "dblp", matrix.Smooth, Improved) }

// BenchmarkUserLists solves generated power-law user lists (mean degree
// 10, 1e5 columns) of growing size with each neighbour search and reports
// the time per row (it should grow no faster than about log n) and the
// Jaccard of the last release, so the cost of the bounded search is seen
// next to its speed; ns/row/ln(rows) is the time per row over the natural
// log of the rows, flat when the time per row grows as log n.
//
// Sizes above -userlists_max (default 1e5) are skipped: 1e6 rows take
// minutes (see make bench-scaling).
func BenchmarkUserLists(b *testing.B) {
	for _, se := range []Search{Bounded, Exact} {
		for _, n := range []int64{1e4, 1e5, 1e6} {
			b.Run(fmt.Sprintf("search=%v/rows=%d", se, n), func(b *testing.B) {
				if n > *userListsMax {
					b.Skipf("rows=%d above -userlists_max=%d", n, *userListsMax)
				}
				m, err := gen.UserListsMatrix(gen.UserListsParams{Rows: n, Columns: 1e5, MeanDegree: 10, Zipf: 1.1, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				var res *Result
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if res, err = Solve(context.Background(), m, Params{K: 8, Seed: int64(i), Search: se}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				perRow := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(n)
				b.ReportMetric(perRow, "ns/row")
				// Flat across sizes when the time per row grows as log n.
				b.ReportMetric(perRow/math.Log(float64(n)), "ns/row/ln(rows)")
				rep, err := verify.Measure(m, res.Release)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(rep.Jaccard, "jaccard")
			})
		}
	}
}
