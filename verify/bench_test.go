package verify

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
)

// dataDir is ../shared/data/raw next to the repository root.
func dataDir(t testing.TB) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..", "shared", "data", "raw")
}

// loadDBLP reads the SNAP com-DBLP edge list as a symmetric user×feature
// matrix (317,080 rows, 2,099,732 entries), or skips.
func loadDBLP(t testing.TB) *matrix.Matrix {
	p := filepath.Join(dataDir(t), "com-dblp.ungraph.noheader.txt.gz")
	f, err := os.Open(p)
	if err != nil {
		t.Skipf("real data set not available (%v); it lives in ../shared/data/raw", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	adj := map[uint32][]uint32{}
	sc := bufio.NewScanner(gz)
	for sc.Scan() {
		a, b, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		x, err1 := strconv.ParseUint(a, 10, 32)
		y, err2 := strconv.ParseUint(b, 10, 32)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		adj[uint32(x)] = append(adj[uint32(x)], uint32(y))
		adj[uint32(y)] = append(adj[uint32(y)], uint32(x))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint32, 0, len(adj))
	for id := range adj {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	m := matrix.New(len(ids), 2*1049866)
	for _, id := range ids {
		m.Append(fmt.Sprintf("n%010d", id), adj[id])
	}
	return m
}

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
