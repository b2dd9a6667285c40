package experiment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/smoothanon/smoothanon/baseline"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// Outcome is one verified release's report and cost.
type Outcome struct {
	// Report is verify.Check's (verify.Measure's for randomized response).
	Report *smoothanonpb.RunReport
	// Release is the verified release: the input's users in its row order.
	Release *matrix.Matrix
	// Clusters is the number of clusters or partitions, −1 for none.
	Clusters int64
	// Seconds is the time the method took, verification excluded.
	Seconds float64
}

// InvalidError is a release that failed verification: a bug in the method,
// never a data point.
type InvalidError struct {
	Method   string
	Problems []string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s: invalid release: %s", e.Method, strings.Join(e.Problems, "; "))
}

// Solve runs the solver on m and checks the release with verify.Check.
func Solve(ctx context.Context, m *matrix.Matrix, p solver.Params) (Outcome, error) {
	start := time.Now()
	res, err := solver.Solve(ctx, m, p)
	el := time.Since(start).Seconds()
	if err != nil {
		return Outcome{}, err
	}
	rep, err := checked(fmt.Sprintf("%s %s k=%d", p.Variant, p.Mode, p.K), m, res.Release, &verify.Params{K: p.K, Mode: p.Mode})
	return Outcome{Report: rep, Release: res.Release, Clusters: res.Info.Clusters, Seconds: el}, err
}

// Mondrian runs the Mondrian baseline on m and checks the release with
// verify.Check (k-anonymity by suppression: nonsmooth).
func Mondrian(ctx context.Context, m *matrix.Matrix, k int) (Outcome, error) {
	start := time.Now()
	res, err := baseline.Mondrian(ctx, m, baseline.MondrianParams{K: k})
	el := time.Since(start).Seconds()
	if err != nil {
		return Outcome{}, err
	}
	rep, err := checked(fmt.Sprintf("mondrian k=%d", k), m, res.Release, &verify.Params{K: k, Mode: matrix.NonSmooth})
	return Outcome{Report: rep, Release: res.Release, Clusters: res.Info.Partitions, Seconds: el}, err
}

// RandomizedResponse runs randomized response on m and measures the release
// with verify.Measure (it claims no k; the check is that it names exactly
// the input's users). Errors wrap baseline.ErrTooLarge for a release
// expected to exceed baseline.DefaultMaxEntries entries.
func RandomizedResponse(ctx context.Context, m *matrix.Matrix, p baseline.RRParams) (Outcome, error) {
	start := time.Now()
	res, err := baseline.RandomizedResponse(ctx, m, p)
	el := time.Since(start).Seconds()
	if err != nil {
		return Outcome{}, err
	}
	rep, err := checked(fmt.Sprintf("%s ε=%g", p.Level.Method(), p.Epsilon), m, res.Release, nil)
	return Outcome{Report: rep, Release: res.Release, Clusters: -1, Seconds: el}, err
}

// checked is verify.Check's report for params p, verify.Measure's when p is
// nil, or an InvalidError naming method when the release is not valid.
func checked(method string, in, out *matrix.Matrix, p *verify.Params) (*smoothanonpb.RunReport, error) {
	var rep *smoothanonpb.RunReport
	var err error
	if p == nil {
		rep, err = verify.Measure(in, out)
	} else {
		rep, err = verify.Check(in, out, *p)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if !rep.Valid {
		return nil, &InvalidError{Method: method, Problems: rep.Problems}
	}
	return rep, nil
}
