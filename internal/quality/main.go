// Command quality measures the solver and the paper's baselines on the
// paper's data sets and prints the quality table as Markdown: for every data
// set, solver variant (improved, paper) and mode (smooth, nonsmooth), and
// for Mondrian (k-anonymity by suppression) and randomized response at
// ε = 10 (edge and node level), the mean ± standard deviation over seeds of
// the Jaccard similarity, the suppressed and created fractions (over the
// input entries), the number of clusters and the time the method took
// (verification excluded). Every k-anonymous release is checked with
// verify.Check (randomized response, which claims no k, with
// verify.Measure); an invalid one aborts the run.
//
// Usage (from the repository root):
//
//	go run ./internal/quality [-seeds 10] [-k 8] [-datasets adult,sbm,dblp,playstore] [-raw ../shared/data/raw]
//
// Seeds are 1..N. The SBM data set is the paper's (n = 1024, s = 64,
// q = 0.8, p = 0.01), drawn afresh with each seed (gen.PaperSBM(seed)).
// Data sets whose raw file is missing are listed as skipped.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/smoothanon/smoothanon/baseline"
	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/importer"
	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// dataset is one row group of the table.
type dataset struct {
	name string
	real bool // a data set of internal/datasets; else the generated SBM
	// Targets (improved smooth / nonsmooth, "" = report only) and the
	// paper's figures (smooth / nonsmooth, and its Mondrian baseline).
	target   [2]string
	paper    [2]string
	mondrian string
}

var sets = []dataset{
	{name: "adult", real: true, target: [2]string{"≥ 90.0%", "≥ 77.0%"}, paper: [2]string{"85.0%", "64.8%"}, mondrian: "59.9%"},
	{name: "sbm", target: [2]string{"≥ 69.0%", "≥ 15.0%"}, paper: [2]string{"68.1%", "16.4%"}, mondrian: "2.2%"},
	{name: "dblp", real: true, target: [2]string{"≥ 28.0%", "≥ 7.5%"}, paper: [2]string{"7.4%", "4.3%"}, mondrian: "not run"},
	{name: "playstore", real: true, target: [2]string{"report", "report"}, paper: [2]string{"66.1%", "39.2%"}, mondrian: "51.2%"},
}

func main() {
	seeds := flag.Int("seeds", 10, "number of seeds (1..N)")
	k := flag.Int("k", 8, "anonymity parameter")
	names := flag.String("datasets", "adult,sbm,dblp,playstore", "comma list of data sets")
	raw := flag.String("raw", datasets.Dir(), "directory of the raw data sets (default $SMOOTHANON_DATA or ../shared/data/raw beside the module)")
	flag.Parse()
	if err := run(os.Stdout, os.Stderr, *seeds, *k, strings.Split(*names, ","), *raw); err != nil {
		fmt.Fprintln(os.Stderr, "quality:", err)
		os.Exit(1)
	}
}

// stat accumulates mean and standard deviation.
type stat struct{ xs []float64 }

func (s *stat) add(x float64) { s.xs = append(s.xs, x) }
func (s *stat) mean() float64 {
	t := 0.0
	for _, x := range s.xs {
		t += x
	}
	return t / float64(len(s.xs))
}
func (s *stat) sd() float64 {
	if len(s.xs) < 2 {
		return 0
	}
	m, t := s.mean(), 0.0
	for _, x := range s.xs {
		t += (x - m) * (x - m)
	}
	return math.Sqrt(t / float64(len(s.xs)-1))
}
func (s *stat) pct() string { return fmt.Sprintf("%.1f ± %.1f%%", 100*s.mean(), 100*s.sd()) }

func load(d dataset, raw string, seed int64) (*matrix.Matrix, error) {
	if !d.real {
		return gen.SBM(gen.PaperSBM(seed))
	}
	set, err := datasets.Get(d.name)
	if err != nil {
		return nil, err
	}
	m, _, err := importer.Import(set.Format, filepath.Join(raw, set.File), set.Opts)
	return m, err
}

func run(stdout, stderr io.Writer, seeds, k int, names []string, raw string) error {
	if seeds < 1 {
		return fmt.Errorf("-seeds = %d, must be at least 1", seeds)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "k = %d, seeds 1..%d, %d CPUs (GOMAXPROCS). Jaccard, suppressed and created entries (fractions of the input entries) as mean ± sd over the seeds; the sbm data set is redrawn with each seed; Mondrian is deterministic and runs once on the other data sets; randomized response (rr) runs at ε = %d.\n\n", k, seeds, runtime.GOMAXPROCS(0), rrEpsilon)
	b.WriteString("| dataset | rows | entries | variant | mode | Jaccard | suppressed | created | clusters | seconds | target | paper |\n")
	b.WriteString("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var skipped []string
	for _, name := range names {
		var d *dataset
		for i := range sets {
			if sets[i].name == name {
				d = &sets[i]
			}
		}
		if d == nil {
			return fmt.Errorf("unknown data set %q", name)
		}
		if d.real {
			set, err := datasets.Get(d.name)
			if err != nil {
				return err
			}
			if p := filepath.Join(raw, set.File); !exists(p) {
				skipped = append(skipped, fmt.Sprintf("%s (%s not found)", name, p))
				continue
			}
		}
		var fixed *matrix.Matrix
		if d.real {
			m, err := load(*d, raw, 0)
			if err != nil {
				return err
			}
			fixed = m
		}
		for _, j := range jobs(*d, k) {
			var jac, sup, cre, clu, sec stat
			var rows, entries int
			runs, refused := seeds, ""
			if j.once && fixed != nil {
				runs = 1 // deterministic on fixed data
			}
			for seed := int64(1); seed <= int64(runs); seed++ {
				m := fixed
				if m == nil {
					var err error
					if m, err = load(*d, raw, seed); err != nil {
						return err
					}
				}
				rows, entries = m.NumRows(), int(m.NumEntries())
				rep, clusters, el, err := j.release(m, seed)
				if errors.Is(err, baseline.ErrTooLarge) {
					refused = fmt.Sprintf("refused: over %.0e output entries", float64(baseline.DefaultMaxEntries))
					break
				}
				if err != nil {
					return fmt.Errorf("%s %s %s seed %d: %w", name, j.variant, j.mode, seed, err)
				}
				if !rep.Valid {
					return fmt.Errorf("%s %s %s seed %d: invalid release: %v", name, j.variant, j.mode, seed, rep.Problems)
				}
				jac.add(rep.Jaccard)
				sup.add(rep.SuppressedFraction)
				cre.add(rep.CreatedFraction)
				clu.add(float64(clusters))
				sec.add(el)
				fmt.Fprintf(stderr, "%s %s %s seed %d: jaccard %.4f, %s clusters, %.2fs\n", name, j.variant, j.mode, seed, rep.Jaccard, count(clusters), el)
			}
			if refused != "" {
				fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | | | | | %s | %s |\n",
					name, rows, entries, j.variant, j.mode, refused, j.target, j.paper)
				continue
			}
			cl := count(int64(math.Round(clu.mean())))
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %s | %s | %.2f ± %.2f | %s | %s |\n",
				name, rows, entries, j.variant, j.mode, jac.pct(), sup.pct(), cre.pct(), cl, sec.mean(), sec.sd(), j.target, j.paper)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "\nSkipped: %s.\n", strings.Join(skipped, "; "))
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}

// job is one row of the table: a way to release a data set, per seed.
type job struct {
	variant, mode string
	target, paper string
	once          bool // deterministic: one run on fixed data, not one per seed
	// release returns the verified report, the number of clusters (−1
	// when the method has none) and the seconds the method took (without
	// the verification).
	release func(m *matrix.Matrix, seed int64) (*smoothanonpb.RunReport, int64, float64, error)
}

// rrEpsilon is the ε of the randomized response rows (the paper's
// figures go up to about 10, where edge privacy starts to keep utility).
const rrEpsilon = 10

// jobs lists the rows of data set d: the solver's two variants in both
// modes, then the baselines.
func jobs(d dataset, k int) []job {
	var js []job
	for _, v := range []solver.Variant{solver.Improved, solver.Paper} {
		for mi, md := range []matrix.Mode{matrix.Smooth, matrix.NonSmooth} {
			target := "—"
			if v == solver.Improved {
				target = d.target[mi]
			}
			js = append(js, job{variant: v.String(), mode: md.String(), target: target, paper: d.paper[mi],
				release: func(m *matrix.Matrix, seed int64) (*smoothanonpb.RunReport, int64, float64, error) {
					start := time.Now()
					res, err := solver.Solve(context.Background(), m, solver.Params{K: k, Mode: md, Variant: v, Seed: seed})
					el := time.Since(start).Seconds()
					if err != nil {
						return nil, 0, 0, err
					}
					rep, err := verify.Check(m, res.Release, verify.Params{K: k, Mode: md})
					return rep, res.Info.Clusters, el, err
				}})
		}
	}
	js = append(js, job{variant: "mondrian", mode: "nonsmooth", target: "—", paper: d.mondrian, once: true,
		release: func(m *matrix.Matrix, _ int64) (*smoothanonpb.RunReport, int64, float64, error) {
			start := time.Now()
			res, err := baseline.Mondrian(context.Background(), m, baseline.MondrianParams{K: k})
			el := time.Since(start).Seconds()
			if err != nil {
				return nil, 0, 0, err
			}
			rep, err := verify.Check(m, res.Release, verify.Params{K: k, Mode: matrix.NonSmooth})
			return rep, res.Info.Partitions, el, err
		}})
	for _, level := range []baseline.Level{baseline.Edge, baseline.Node} {
		js = append(js, job{variant: fmt.Sprintf("%s ε=%d", level.Method(), rrEpsilon), mode: "ε-DP", target: "—", paper: "—",
			release: func(m *matrix.Matrix, seed int64) (*smoothanonpb.RunReport, int64, float64, error) {
				start := time.Now()
				res, err := baseline.RandomizedResponse(context.Background(), m, baseline.RRParams{Epsilon: rrEpsilon, Level: level, Seed: seed})
				el := time.Since(start).Seconds()
				if err != nil {
					return nil, 0, 0, err
				}
				rep, err := verify.Measure(m, res.Release)
				return rep, -1, el, err
			}})
	}
	return js
}

// count prints a number of clusters, "—" for none (negative).
func count(n int64) string {
	if n < 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
