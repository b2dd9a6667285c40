package pipeline

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
	"github.com/smoothanon/smoothanon/verify"
)

var (
	benchRows     = flag.Int64("pipeline_rows", 1_000_000, "rows of the generated user lists in BenchmarkUserLists")
	benchKey      = flag.String("pipeline_key", "auto", "leading chunk key: auto, spectral, hub, two_hop or minhash")
	benchStart    = flag.String("pipeline_start", "auto", "solver start: auto, both or mondrian")
	benchIters    = flag.Int("pipeline_iterations", 0, "rounds of the spectral key (0 = default)")
	benchSeed     = flag.Int64("pipeline_seed", 1, "seed of BenchmarkDBLP's pipeline and whole-data solve")
	benchRunner   = flag.String("pipeline_runner", "prism", "runner of the pipeline benchmarks (flink needs -pipeline_endpoint)")
	benchEndpoint = flag.String("pipeline_endpoint", "", "job server endpoint for -pipeline_runner flink/universal (LOOPBACK workers)")
	benchPool     = flag.Float64("pipeline_pool_share", DefaultPoolShare, "share of every chunk solved again in pools (0 = none)")
	benchWhole    = flag.Bool("pipeline_whole", false, "BenchmarkDBLP also solves dblp whole in one process and reports the Jaccard gap")
)

func key(b *testing.B) transforms.Key {
	k, err := transforms.ParseKey(*benchKey)
	if err != nil {
		b.Fatal(err)
	}
	return k
}

// withStart sets p's start from -pipeline_start.
func withStart(b *testing.B, p Params) Params {
	var err error
	if p.Solver.Start, p.AutoStart, err = ParseStart(*benchStart); err != nil {
		b.Fatal(err)
	}
	return p
}

// reportedStart is the start a pipeline run used, for the whole solve
// it is compared with.
func reportedStart(b *testing.B, res *Result) solver.Start {
	st, err := solver.ParseStart(res.Report.Solve.GetStart())
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// peakRSSMB is this process's peak resident set (VmHWM) in MB.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// writeParts writes m as parts Parquet files of 64Ki-row groups.
func writeParts(tb testing.TB, dir string, m *matrix.Matrix, parts int) string {
	n := m.NumRows()
	for j := 0; j < parts; j++ {
		lo, hi := j*n/parts, (j+1)*n/parts
		w, err := matrix.Create(filepath.Join(dir, fmt.Sprintf("in-%03d.parquet", j)), matrix.WriterOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		for i := lo; i < hi; i++ {
			if err := w.Write(m.Users[i], m.Row(i)); err != nil {
				tb.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return filepath.Join(dir, "in-*.parquet")
}

func runBench(b *testing.B, p Params) *Result {
	b.Helper()
	p.Runner = *benchRunner
	p.PoolShare = *benchPool
	if *benchEndpoint != "" {
		p.Endpoint, p.EnvironmentType = *benchEndpoint, "LOOPBACK"
	}
	var res *Result
	for i := 0; i < b.N; i++ {
		p := p
		p.Output = filepath.Join(b.TempDir(), "out")
		var err error
		start := time.Now()
		res, err = Run(context.Background(), p)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "wall_s")
	}
	r := res.Report
	b.ReportMetric(float64(r.Rows)/r.Pipeline.Seconds, "rows/s")
	b.ReportMetric(r.Jaccard, "jaccard")
	b.ReportMetric(float64(r.Pipeline.Chunks), "chunks")
	b.ReportMetric(r.Solve.Seconds/float64(max(1, r.Pipeline.Chunks)), "solve_s/chunk")
	b.ReportMetric(peakRSSMB(), "peakRSS_MB")
	b.Logf("%s: key %s, start %s: %d rows, %d chunks (rows %.0f±%.0f, min %d), J=%.4f, valid=%v, %.1fs pipeline, %.1fs solving in total, peak RSS %.0f MB",
		r.Pipeline.Runner, r.Pipeline.ChunkKey, r.Solve.GetStart(), r.Rows, r.Pipeline.Chunks, r.Pipeline.ChunkRows.Mean, r.Pipeline.ChunkRows.Stddev,
		r.Pipeline.ChunkRows.Min, r.Jaccard, r.Valid, r.Pipeline.Seconds, r.Solve.Seconds, peakRSSMB())
	if pl := r.Pipeline.Pool; pl != nil {
		b.Logf("pools of %.2f: %d rows in %d pools, %d improved, %.1fs solving, J %.4f before", pl.Share, pl.Rows, pl.Pools, pl.Improved, pl.Seconds, pl.JaccardBefore)
	}
	return res
}

// BenchmarkDBLP runs com-DBLP (317,080 rows) through the pipeline on prism
// at k=8, smooth, chunk size 1e5. With -pipeline_whole it also solves the
// whole data set in one process and reports the Jaccard gap (target < 0.01).
// Targets: ≤ 90 s, ≤ 3 GB RSS (run alone: -run '^$' -bench DBLP -benchtime 1x).
func BenchmarkDBLP(b *testing.B) {
	m := datasets.ForTest(b, "dblp")
	input := writeParts(b, b.TempDir(), m, 4)
	b.ResetTimer()
	res := runBench(b, withStart(b, Params{Input: input,
		Solver: solver.Params{K: 8, Seed: *benchSeed}, ChunkSize: 100_000, Key: key(b), SpectralIterations: *benchIters}))
	if *benchWhole {
		b.StopTimer()
		start := time.Now()
		whole, err := solver.Solve(context.Background(), m, solver.Params{K: 8, Seed: *benchSeed, Start: reportedStart(b, res)})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := verify.Check(m, whole.Release, verify.Params{K: 8, Mode: matrix.Smooth})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rep.Jaccard, "whole_jaccard")
		b.ReportMetric(rep.Jaccard-res.Report.Jaccard, "jaccard_gap")
		b.Logf("whole-dataset solve: J=%.4f in %.1fs; pipeline J=%.4f; gap %.4f", rep.Jaccard,
			time.Since(start).Seconds(), res.Report.Jaccard, rep.Jaccard-res.Report.Jaccard)
	}
}

// BenchmarkUserLists runs -pipeline_rows (default 1e6) generated power-law
// user lists (1e6 columns, mean degree 10) through the pipeline on prism,
// k=8 smooth, chunk size 1e5. With -pipeline_whole it then solves the same
// rows whole in this process, from the start the pipeline used, and reports the pipeline's rows/s as a
// fraction of the whole solve's (the pipeline's peak RSS is read before).
func BenchmarkUserLists(b *testing.B) {
	dir := b.TempDir()
	g := gen.UserListsParams{Rows: *benchRows, Columns: 1_000_000, MeanDegree: 10, Zipf: 1.1, Seed: 1}
	w, err := matrix.Create(filepath.Join(dir, "in.parquet"), matrix.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := gen.UserLists(w, g); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	res := runBench(b, withStart(b, Params{Input: filepath.Join(dir, "in.parquet"),
		Solver: solver.Params{K: 8, Seed: 1}, ChunkSize: 100_000, Key: key(b), SpectralIterations: *benchIters}))
	if !*benchWhole {
		return
	}
	b.StopTimer()
	m, _, err := matrix.ReadMatrix(filepath.Join(dir, "in.parquet"), matrix.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	whole, err := solver.Solve(context.Background(), m, solver.Params{K: 8, Seed: 1, Start: reportedStart(b, res)})
	if err != nil {
		b.Fatal(err)
	}
	secs := time.Since(start).Seconds()
	rep, err := verify.Check(m, whole.Release, verify.Params{K: 8, Mode: matrix.Smooth})
	if err != nil {
		b.Fatal(err)
	}
	pipeRate := float64(res.Report.Rows) / res.Report.Pipeline.Seconds
	wholeRate := float64(m.NumRows()) / secs
	b.ReportMetric(wholeRate, "whole_rows/s")
	b.ReportMetric(pipeRate/wholeRate, "pipeline/whole")
	b.Logf("whole-input solve: %.1fs (%.0f rows/s), J=%.4f; pipeline %.1fs (%.0f rows/s, %.2f× the whole solve), J=%.4f",
		secs, wholeRate, rep.Jaccard, res.Report.Pipeline.Seconds, pipeRate, pipeRate/wholeRate, res.Report.Jaccard)
}
