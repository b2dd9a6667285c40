package solver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/importer"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

// rawDir is ../shared/data/raw relative to the repository root.
var rawDir = filepath.Join("..", "..", "shared", "data", "raw")

func loadDataset(tb testing.TB, name string) *matrix.Matrix {
	tb.Helper()
	var file, format string
	opts := importer.Options{}
	switch name {
	case "adult":
		file, format = "adult.data.gz", "adult"
	case "playstore":
		file, format = "googleplaystore.csv.gz", "playstore"
	case "dblp":
		file, format = "com-dblp.ungraph.noheader.txt.gz", "edges"
		opts.Undirected = true
	case "sbm":
		m, err := gen.SBM(gen.PaperSBM(1))
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
	path := filepath.Join(rawDir, file)
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("dataset %s not available at %s", name, path)
	}
	m, _, err := importer.Import(format, path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func benchSolve(b *testing.B, name string, mode verify.Mode, v Variant) {
	m := loadDataset(b, name)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Solve(context.Background(), m, Params{K: 8, Mode: mode, Seed: int64(i), Variant: v}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.NumRows()), "ns/row")
}

func BenchmarkAdultSmooth(b *testing.B)    { benchSolve(b, "adult", verify.Smooth, Improved) }
func BenchmarkAdultNonSmooth(b *testing.B) { benchSolve(b, "adult", verify.NonSmooth, Improved) }
func BenchmarkAdultPaper(b *testing.B)     { benchSolve(b, "adult", verify.Smooth, Paper) }
func BenchmarkSBMSmooth(b *testing.B)      { benchSolve(b, "sbm", verify.Smooth, Improved) }
func BenchmarkDBLPSmooth(b *testing.B)     { benchSolve(b, "dblp", verify.Smooth, Improved) }
