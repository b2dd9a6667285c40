package verify

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/matrix"
)

// loadDBLP is the SNAP com-DBLP graph as a symmetric user×feature matrix
// (317,080 rows, 2,099,732 entries), or skips (see internal/datasets).
func loadDBLP(t testing.TB) *matrix.Matrix { return datasets.ForTest(t, "dblp") }

// clusterRelease applies the majority rule to clusters of size consecutive
// rows (the last cluster takes the remainder): a smooth release.
func clusterRelease(in *matrix.Matrix, size int) *matrix.Matrix {
	out := matrix.New(in.NumRows(), int(in.NumEntries()))
	count := map[uint32]int{}
	var feats []uint32
	n := in.NumRows()
	for lo := 0; lo < n; {
		hi := min(lo+size, n)
		if n-hi < size {
			hi = n
		}
		clear(count)
		for i := lo; i < hi; i++ {
			for _, x := range in.Row(i) {
				count[x]++
			}
		}
		feats = feats[:0]
		for x, c := range count {
			if 2*c >= hi-lo {
				feats = append(feats, x)
			}
		}
		slices.Sort(feats)
		for i := lo; i < hi; i++ {
			out.Users = append(out.Users, in.Users[i])
			out.Features = append(out.Features, feats...)
			out.Offsets = append(out.Offsets, int64(len(out.Features)))
		}
		lo = hi
	}
	return out
}

// TestCheckDBLP verifies a release of the real DBLP graph.
func TestCheckDBLP(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	in := loadDBLP(t)
	out := clusterRelease(in, 10)
	start := time.Now()
	r, err := Check(in, out, Params{K: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dblp: %d rows, %d entries in, %d out, jaccard %.4f, %d classes, check took %v",
		r.Rows, r.EntriesIn, r.EntriesOut, r.Jaccard, r.Classes, time.Since(start))
	if !r.Valid || r.Rows != 317080 || r.EntriesIn != 2099732 {
		t.Fatalf("dblp release: valid %v rows %d entries %d problems %q", r.Valid, r.Rows, r.EntriesIn, r.Problems)
	}
	// Shuffling output rows changes nothing.
	out2 := out.Permute(reverse(out.NumRows()))
	r2, _ := Check(in, out2, Params{K: 10})
	if r2.Jaccard != r.Jaccard || r2.Classes != r.Classes || !r2.Valid {
		t.Errorf("reversed output: %+v", r2)
	}
}

func reverse(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = n - 1 - i
	}
	return o
}

// BenchmarkCheckDBLP times Check on the DBLP graph (317k rows, 2.1M
// entries) against a smooth 10-anonymous release of it ("k10", few output
// entries) and against itself ("identity", 2.1M output entries, 317k
// classes).
func BenchmarkCheckDBLP(b *testing.B) {
	in := loadDBLP(b)
	for _, bc := range []struct {
		name string
		out  *matrix.Matrix
		k    int
	}{{"k10", clusterRelease(in, 10), 10}, {"identity", in.Clone(), 1}} {
		b.Run(bc.name, func(b *testing.B) {
			runtime.GC()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Check(in, bc.out, Params{K: bc.k}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/check")
			b.ReportMetric(float64(in.NumEntries()+bc.out.NumEntries())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mentries/s")
		})
	}
}
