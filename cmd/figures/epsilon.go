package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/smoothanon/smoothanon/baseline"
	"github.com/smoothanon/smoothanon/internal/experiment"
	"github.com/smoothanon/smoothanon/matrix"
)

// jaccardLevels are the Jaccard values of the ε-vs-density figure.
var jaccardLevels = []float64{0.25, 0.5, 0.75, 0.9}

// Bisection settings of epsilonFor.
const (
	epsTolerance = 0.005 // stop when the bracket is this narrow
	epsMax       = 60    // beyond it randomized response keeps every cell
)

// rrJaccard returns the mean Jaccard of ε-edge randomized response over ms
// (seed i+1 for ms[i], the same seeds at every ε), every release checked
// with verify.Measure. A release refused as too large
// (baseline.ErrTooLarge: over baseline.DefaultMaxEntries expected
// entries) counts as Jaccard 0: it would be mostly created entries.
func rrJaccard(ms []*matrix.Matrix) func(eps float64) (float64, error) {
	return func(eps float64) (float64, error) {
		var jac experiment.Stat
		for i, m := range ms {
			o, err := experiment.RandomizedResponse(context.Background(), m,
				baseline.RRParams{Epsilon: eps, Level: baseline.Edge, Seed: int64(i + 1)})
			if errors.Is(err, baseline.ErrTooLarge) {
				jac.Add(0)
				continue
			}
			if err != nil {
				return 0, err
			}
			jac.Add(o.Report.Jaccard)
		}
		return jac.Mean(), nil
	}
}

// epsilonFor is the ε at which jac (increasing in ε) reaches target, by
// bisection to epsTolerance. The bracket starts at the theorem's ε for
// density ±0.5 (randomized response's expected Jaccard is the theorem's
// main term, so the answer is near) and widens until it holds the answer.
func epsilonFor(target float64, jac func(float64) (float64, error), density float64) (float64, error) {
	guess := boundEpsilon(target, density)
	if math.IsNaN(guess) || math.IsInf(guess, 0) {
		guess = 5
	}
	lo, hi := max(guess-0.5, epsTolerance), min(guess+0.5, epsMax)
	for {
		j, err := jac(lo)
		if err != nil {
			return 0, err
		}
		if j <= target || lo <= epsTolerance {
			break
		}
		lo = max(lo-2*(hi-lo), epsTolerance)
	}
	for {
		j, err := jac(hi)
		if err != nil {
			return 0, err
		}
		if j >= target {
			break
		}
		if hi >= epsMax {
			return 0, fmt.Errorf("randomized response stays below Jaccard %.4f up to ε = %d", target, epsMax)
		}
		hi = min(hi+2*(hi-lo), epsMax)
	}
	for hi-lo > epsTolerance {
		mid := (lo + hi) / 2
		j, err := jac(mid)
		if err != nil {
			return 0, err
		}
		if j < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, nil
}

// boundEpsilon is the ε at which the main term of the paper's randomized
// response theorem (Theorem prop:upperbound-eps; the Hoeffding term
// 2·sqrt(C(δ)/Q) vanishes as the table grows),
//
//	J = (1 − q) / (1 + q·(1 − λ)/λ),  q = 1/(e^ε + 1),
//
// equals jaccard at density λ: q = (1 − J) / (1 + J·(1 − λ)/λ) and
// ε = ln(1/q − 1). The term is also the ratio of randomized response's
// expected kept and union sizes (E|E∩E'| = (1−q)|E|, E|E∪E'| =
// |E| + q(Q − |E|)), so measured points should lie on its curve.
func boundEpsilon(jaccard, density float64) float64 {
	q := (1 - jaccard) / (1 + jaccard*(1-density)/density)
	return math.Log(1/q - 1)
}
