package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/smoothanon/smoothanon/baseline"
	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/internal/experiment"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// params configure a measurement.
type params struct {
	seeds int      // Required; ≥ 1: seeds 1..seeds.
	k     int      // Required; ≥ 2.
	names []string // Required; data sets of experiment.Names.
	raw   string   // Required; the real data sets' directory.
}

func (p params) check() error {
	if p.seeds < 1 {
		return &usageError{fmt.Sprintf("-seeds = %d, must be at least 1", p.seeds)}
	}
	if p.k < 2 {
		return &usageError{fmt.Sprintf("-k = %d, must be at least 2", p.k)}
	}
	for _, n := range p.names {
		if !slices.Contains(experiment.Names, n) {
			return &usageError{fmt.Sprintf("-datasets: unknown data set %q (want some of %v)", n, experiment.Names)}
		}
	}
	return nil
}

// set is one data set's measurements; skipped names its missing file.
type set struct {
	name          string
	rows, entries int
	skipped       string
	results       []result
	// oracle is, for the SBM, per seed: the improved solver's smooth
	// Jaccard and the block oracle's (see blockOracle).
	oracle []oracleRow
}

// oracleRow is one SBM seed: the improved smooth solve against the
// generator's blocks.
type oracleRow struct {
	seed           int64
	solver, oracle float64
}

// result is one row of the full table.
type result struct {
	variant, mode, target, paper string
	jac, sup, cre, clu, sec      experiment.Stat
	refused                      string // why the method declined, "" when it ran
}

// measure runs every job of every data set of p.
func measure(p params, stderr io.Writer) ([]set, error) {
	src := experiment.Source{Raw: p.raw}
	var sets []set
	for _, name := range p.names {
		s, err := measureSet(src, name, p, stderr)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return sets, nil
}

func measureSet(src experiment.Source, name string, p params, stderr io.Writer) (set, error) {
	s := set{name: name}
	missing, err := src.Missing(name)
	if err != nil || missing != "" {
		s.skipped = missing + " not found"
		return s, err
	}
	var fixed *matrix.Matrix
	if experiment.Fixed(name) {
		if fixed, err = src.Load(name, 0); err != nil {
			return s, err
		}
	}
	for _, j := range jobs(name, p.k) {
		r := result{variant: j.variant, mode: j.mode, target: j.target, paper: j.paper}
		runs := p.seeds
		if j.once && fixed != nil {
			runs = 1 // deterministic on fixed data
		}
		for seed := int64(1); seed <= int64(runs); seed++ {
			m := fixed
			if m == nil {
				if m, err = src.Load(name, seed); err != nil {
					return s, err
				}
			}
			s.rows, s.entries = m.NumRows(), int(m.NumEntries())
			o, err := j.release(m, seed)
			if errors.Is(err, baseline.ErrTooLarge) {
				r.refused = fmt.Sprintf("refused: over %.0e output entries", float64(baseline.DefaultMaxEntries))
				break
			}
			if err != nil {
				return s, fmt.Errorf("%s %s %s seed %d: %w", name, j.variant, j.mode, seed, err)
			}
			if name == experiment.SBM && j.variant == solver.Improved.String() && j.mode == matrix.Smooth.String() {
				or, err := blockOracle(m, gen.PaperSBM(seed).S, p.k)
				if err != nil {
					return s, fmt.Errorf("sbm block oracle seed %d: %w", seed, err)
				}
				s.oracle = append(s.oracle, oracleRow{seed, o.Report.Jaccard, or})
			}
			r.jac.Add(o.Report.Jaccard)
			r.sup.Add(o.Report.SuppressedFraction)
			r.cre.Add(o.Report.CreatedFraction)
			r.clu.Add(float64(o.Clusters))
			r.sec.Add(o.Seconds)
			fmt.Fprintf(stderr, "%s %s %s seed %d: jaccard %.4f, %s clusters, %.2fs\n", name, j.variant, j.mode, seed, o.Report.Jaccard, count(o.Clusters), o.Seconds)
		}
		s.results = append(s.results, r)
	}
	return s, nil
}

// job is one row of the table: a way to release a data set, per seed.
type job struct {
	variant, mode string
	target, paper string
	once          bool // deterministic: one run on fixed data, not one per seed
	release       func(m *matrix.Matrix, seed int64) (experiment.Outcome, error)
}

// rrEpsilon is the ε of the randomized response rows (the paper's
// figures go up to about 10, where edge privacy starts to keep utility).
const rrEpsilon = 10

// targets are the improved solver's smooth / nonsmooth Jaccard goals at
// k = 8 ("report": none).
var targets = map[string][2]string{
	"adult":        {"≥ 90.0%", "≥ 77.0%"},
	experiment.SBM: {"≥ 69.0%", "≥ 15.0%"},
	"dblp":         {"≥ 28.0%", "≥ 7.5%"},
	"playstore":    {"report", "report"},
}

// jobs lists the rows of data set name: the solver's two variants in both
// modes, then the baselines.
func jobs(name string, k int) []job {
	ctx := context.Background()
	paper := experiment.Paper[name]
	mondrian := "not run"
	if paper.HasMondrian {
		mondrian = pct(paper.Mondrian)
	}
	var js []job
	for _, v := range []solver.Variant{solver.Improved, solver.Paper} {
		for mi, md := range []matrix.Mode{matrix.Smooth, matrix.NonSmooth} {
			target := "—"
			if v == solver.Improved {
				target = targets[name][mi]
			}
			js = append(js, job{variant: v.String(), mode: md.String(), target: target, paper: pct([2]float64{paper.Smooth, paper.NonSmooth}[mi]),
				release: func(m *matrix.Matrix, seed int64) (experiment.Outcome, error) {
					return experiment.Solve(ctx, m, solver.Params{K: k, Mode: md, Variant: v, Seed: seed})
				}})
		}
	}
	js = append(js, job{variant: "mondrian", mode: matrix.NonSmooth.String(), target: "—", paper: mondrian, once: true,
		release: func(m *matrix.Matrix, _ int64) (experiment.Outcome, error) {
			return experiment.Mondrian(ctx, m, k)
		}})
	for _, level := range []baseline.Level{baseline.Edge, baseline.Node} {
		js = append(js, job{variant: fmt.Sprintf("%s ε=%d", level.Method(), rrEpsilon), mode: "ε-DP", target: "—", paper: "—",
			release: func(m *matrix.Matrix, seed int64) (experiment.Outcome, error) {
				return experiment.RandomizedResponse(ctx, m, baseline.RRParams{Epsilon: rrEpsilon, Level: level, Seed: seed})
			}})
	}
	return js
}

// blockOracle is the Jaccard of the SBM's block clustering: the clusters
// are the generator's true blocks (rows i·size .. (i+1)·size − 1, as
// gen.SBM draws them), each released under the majority rule, as smooth
// mode releases a cluster. The release is checked with verify.Check.
func blockOracle(m *matrix.Matrix, size, k int) (float64, error) {
	n := m.NumRows()
	if size < k || n%size != 0 {
		return 0, fmt.Errorf("%d rows do not form blocks of %d ≥ k = %d", n, size, k)
	}
	rel := matrix.New(n, int(m.NumEntries()))
	cnt := map[uint32]int{}
	for lo := 0; lo < n; lo += size {
		clear(cnt)
		for i := lo; i < lo+size; i++ {
			for _, f := range m.Row(i) {
				cnt[f]++
			}
		}
		var centre []uint32
		for f, h := range cnt {
			if 2*h >= size {
				centre = append(centre, f)
			}
		}
		slices.Sort(centre)
		for i := lo; i < lo+size; i++ {
			rel.Append(m.Users[i], centre)
		}
	}
	rep, err := verify.Check(m, rel, verify.Params{K: k, Mode: matrix.Smooth})
	if err != nil {
		return 0, err
	}
	if !rep.Valid {
		return 0, fmt.Errorf("block oracle release invalid: %v", rep.Problems)
	}
	return rep.Jaccard, nil
}

// count prints a number of clusters, "—" for none (negative).
func count(n int64) string {
	if n < 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

// pct prints a fraction as a percentage with one decimal.
func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// meanSD prints a Stat of fractions as "mean ± sd%".
func meanSD(s *experiment.Stat) string {
	return fmt.Sprintf("%.1f ± %.1f%%", 100*s.Mean(), 100*s.SD())
}

// clusters prints the mean number of clusters.
func clusters(s *experiment.Stat) string { return count(int64(math.Round(s.Mean()))) }
