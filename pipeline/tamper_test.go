package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

func init() {
	register.Function1x1(addPrivateFeature)
}

// addPrivateFeature gives every 10th user (id ending in 0) a feature of its own: a
// class of one user, and in smooth mode a feature nobody held.
func addPrivateFeature(b transforms.OutBlock) transforms.OutBlock {
	out := matrix.New(b.Out.NumRows(), len(b.Out.Features))
	for i, u := range b.Out.Users {
		row := b.Out.Row(i)
		if strings.HasSuffix(u, "0") {
			row = append(slices.Clone(row), 4_000_000_000)
		}
		out.Append(u, row)
	}
	b.Out = *out
	return b
}

// TestBadReleaseIsNotPublished corrupts the solver's output inside the
// job: the global verification must fail the job, report why, and leave
// no output behind.
func TestBadReleaseIsNotPublished(t *testing.T) {
	dir := t.TempDir()
	_, files := writeInput(t, dir, gen.SBMParams{N: 300, S: 30, Q: 0.5, P: 0.01, Seed: 2})
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "out"), Solver: solver.Params{K: 4, Seed: 1}, ChunkSize: 100}
	res, err := run(context.Background(), p, hooks{tamper: func(s beam.Scope, out beam.PCollection) beam.PCollection {
		return beam.ParDo(s.Scope("Tamper"), addPrivateFeature, out)
	}})
	if !errors.Is(err, ErrVerification) {
		t.Fatalf("err %v, want ErrVerification", err)
	}
	if res == nil {
		t.Fatal("no report from a failed verification")
	}
	if r := res.Report; r.Valid || r.SmallClasses == 0 || r.MajorityViolations == 0 || len(r.Problems) == 0 {
		t.Fatalf("report valid=%v small=%d majority=%d problems=%q, want invalid with both kinds of problem",
			r.Valid, r.SmallClasses, r.MajorityViolations, r.Problems)
	}
	if _, err := os.Stat(p.Output); !os.IsNotExist(err) {
		t.Errorf("output exists after a failed verification (%v)", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".out*"))
	if len(left) > 0 {
		t.Errorf("staging left behind: %v", left)
	}
}
