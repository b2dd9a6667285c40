package main

import (
	"context"
	"fmt"
	"io"

	"github.com/smoothanon/smoothanon/internal/experiment"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
)

// Methods of the Jaccard-vs-k curves, in drawing order.
const (
	methodSmooth    = "smooth"
	methodNonSmooth = "non-smooth"
	methodMondrian  = "Mondrian"
)

// curve is one method's mean Jaccard (and its standard deviation over the
// SBM's draws; 0 on the real data sets) at each k of setResult.Ks.
type curve struct {
	Method string    `json:"method"`
	Mean   []float64 `json:"mean"`
	SD     []float64 `json:"sd"`
}

// setResult is what is measured on one data set.
type setResult struct {
	Name    string  `json:"name"`
	Rows    int     `json:"rows"`
	Entries int64   `json:"entries"`
	Density float64 `json:"density"` // the paper's λ, mean over the draws
	Draws   int     `json:"draws"`   // matrices averaged: SBM draws, 1 for a real set
	Ks      []int   `json:"ks"`
	Curves  []curve `json:"curves"`
	// EpsilonAtK is, for each k, the ε at which ε-edge randomized response
	// reaches the smooth curve's mean Jaccard.
	EpsilonAtK []float64 `json:"epsilon_at_k"`
	// EpsilonAtJaccard is the ε randomized response needs for each of
	// jaccardLevels.
	EpsilonAtJaccard []float64 `json:"epsilon_at_jaccard"`
}

// draws returns the data set's matrices: one for a real data set, the
// SBM drawn with seeds 1..seeds.
func draws(src experiment.Source, name string, seeds int) ([]*matrix.Matrix, error) {
	if experiment.Fixed(name) {
		seeds = 1
	}
	var ms []*matrix.Matrix
	for seed := int64(1); seed <= int64(seeds); seed++ {
		m, err := src.Load(name, seed)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// measureSet measures the Jaccard-vs-k curves of data set name and the ε
// randomized response needs to match them and the Jaccard levels.
func measureSet(src experiment.Source, name string, p params, log io.Writer) (setResult, error) {
	ms, err := draws(src, name, p.seeds)
	if err != nil {
		return setResult{}, err
	}
	return measureMatrices(name, ms, p.ks, log)
}

// measureMatrices is measureSet on the matrices ms of data set name.
func measureMatrices(name string, ms []*matrix.Matrix, ks []int, log io.Writer) (setResult, error) {
	s, err := measureCurves(name, ms, ks, log)
	if err != nil {
		return s, err
	}
	rr := rrJaccard(ms)
	for i, k := range s.Ks {
		eps, err := epsilonFor(s.Curves[0].Mean[i], rr, s.Density)
		if err != nil {
			return s, fmt.Errorf("%s k=%d: %w", name, k, err)
		}
		fmt.Fprintf(log, "%s k=%d: smooth jaccard %.4f = rr_edge at ε %.3f\n", name, k, s.Curves[0].Mean[i], eps)
		s.EpsilonAtK = append(s.EpsilonAtK, eps)
	}
	for _, j := range jaccardLevels {
		eps, err := epsilonFor(j, rr, s.Density)
		if err != nil {
			return s, fmt.Errorf("%s jaccard %.2f: %w", name, j, err)
		}
		fmt.Fprintf(log, "%s: rr_edge reaches jaccard %.2f at ε %.3f (theorem %.3f)\n", name, j, eps, boundEpsilon(j, s.Density))
		s.EpsilonAtJaccard = append(s.EpsilonAtJaccard, eps)
	}
	return s, nil
}

// measureCurves solves every matrix of ms at every k in both modes and
// with Mondrian, each release verified, and averages the Jaccard over ms.
func measureCurves(name string, ms []*matrix.Matrix, ks []int, log io.Writer) (setResult, error) {
	ctx := context.Background()
	s := setResult{Name: name, Rows: ms[0].NumRows(), Entries: ms[0].NumEntries(), Draws: len(ms), Ks: ks}
	var density experiment.Stat
	for _, m := range ms {
		density.Add(experiment.Density(m))
	}
	s.Density = density.Mean()
	methods := []struct {
		name    string
		release func(m *matrix.Matrix, k int, seed int64) (experiment.Outcome, error)
	}{
		{methodSmooth, func(m *matrix.Matrix, k int, seed int64) (experiment.Outcome, error) {
			return experiment.Solve(ctx, m, solver.Params{K: k, Mode: matrix.Smooth, Seed: seed})
		}},
		{methodNonSmooth, func(m *matrix.Matrix, k int, seed int64) (experiment.Outcome, error) {
			return experiment.Solve(ctx, m, solver.Params{K: k, Mode: matrix.NonSmooth, Seed: seed})
		}},
		{methodMondrian, func(m *matrix.Matrix, k int, _ int64) (experiment.Outcome, error) {
			return experiment.Mondrian(ctx, m, k)
		}},
	}
	for _, md := range methods {
		c := curve{Method: md.name}
		for _, k := range ks {
			var jac experiment.Stat
			for i, m := range ms {
				o, err := md.release(m, k, int64(i+1))
				if err != nil {
					return s, fmt.Errorf("%s %s k=%d seed %d: %w", name, md.name, k, i+1, err)
				}
				jac.Add(o.Report.Jaccard)
			}
			fmt.Fprintf(log, "%s %s k=%d: jaccard %.4f ± %.4f (%d runs)\n", name, md.name, k, jac.Mean(), jac.SD(), jac.N())
			c.Mean, c.SD = append(c.Mean, jac.Mean()), append(c.SD, jac.SD())
		}
		s.Curves = append(s.Curves, c)
	}
	return s, nil
}
