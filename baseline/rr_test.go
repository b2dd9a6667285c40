package baseline

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

func TestCheckRRParams(t *testing.T) {
	for _, c := range []struct {
		p    RRParams
		want string // "" = valid
	}{
		{RRParams{Epsilon: 1}, ""},
		{RRParams{Epsilon: 10, Level: Node, Seed: -4, MaxEntries: 5}, ""},
		{RRParams{Epsilon: 0}, "epsilon = 0"},
		{RRParams{Epsilon: -1}, "epsilon = -1"},
		{RRParams{Epsilon: math.NaN()}, "epsilon = NaN"},
		{RRParams{Epsilon: math.Inf(1)}, "epsilon = +Inf"},
		{RRParams{Epsilon: 1, Level: 7}, "invalid level 7"},
		{RRParams{Epsilon: 1, MaxEntries: -1}, "max entries = -1"},
	} {
		err := CheckRRParams(c.p)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckRRParams(%+v) = %v, want %q", c.p, err, c.want)
		}
	}
}

func TestFlipProbability(t *testing.T) {
	if p := FlipProbability(math.Log(3), Edge, 100); math.Abs(p-0.5) > 1e-12 {
		t.Errorf("edge, epsilon ln 3: p = %v, want 0.5", p)
	}
	if p := FlipProbability(100*math.Log(3), Node, 100); math.Abs(p-0.5) > 1e-12 {
		t.Errorf("node, epsilon 100 ln 3 over 100 columns: p = %v, want 0.5", p)
	}
	if p := FlipProbability(10, Node, 102); p < 0.95 || p > 0.96 {
		t.Errorf("node, epsilon 10 over adult's 102 columns: p = %v, want about 0.951", p)
	}
}

// TestRRStatistics: a set cell is kept with probability 1−p/2 and an empty
// one set with probability p/2, at both levels (within 5 standard
// deviations over about 10^5 cells each).
func TestRRStatistics(t *testing.T) {
	m := randomMatrix(3, 3000, 60, 8)
	cols := map[uint32]bool{}
	for _, f := range m.Features {
		cols[f] = true
	}
	cells := float64(m.NumRows() * len(cols))
	set := float64(m.NumEntries())
	for _, c := range []struct {
		eps   float64
		level Level
	}{{1, Edge}, {3, Edge}, {60, Node}} {
		res, err := RandomizedResponse(context.Background(), m, RRParams{Epsilon: c.eps, Level: c.level, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := verify.Measure(m, res.Release)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Valid {
			t.Fatalf("%v: users differ: %v", c, rep.Problems)
		}
		q := FlipProbability(c.eps, c.level, len(cols)) / 2
		if res.Info.FlipProbability != 2*q || res.Info.Method != c.level.Method() || res.Info.Columns != int64(len(cols)) {
			t.Errorf("%v: info %+v", c, res.Info)
		}
		within := func(what string, got, n, prob float64) {
			if sd := math.Sqrt(n * prob * (1 - prob)); math.Abs(got-n*prob) > 5*sd+1 {
				t.Errorf("%v: %s = %.0f, want %.0f ± %.0f", c, what, got, n*prob, 5*sd)
			}
		}
		within("kept", float64(rep.EntriesKept), set, 1-q)
		within("created", float64(rep.Created), cells-set, q)
		for i := range res.Release.Users {
			for _, f := range res.Release.Row(i) {
				if !cols[f] {
					t.Fatalf("%v: row %d holds feature %d, not a column of the input", c, i, f)
				}
			}
		}
	}
}

func TestRRDeterministic(t *testing.T) {
	m := randomMatrix(4, 500, 40, 5)
	run := func(seed int64) *matrix.Matrix {
		res, err := RandomizedResponse(context.Background(), m, RRParams{Epsilon: 2, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Release.Validate(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Release.Users, m.Users) {
			t.Fatal("release users differ from the input's")
		}
		return res.Release
	}
	a, b, c := run(1), run(1), run(2)
	if !a.Equal(b) {
		t.Error("same seed, different releases")
	}
	if a.Equal(c) {
		t.Error("seeds 1 and 2 gave the same release")
	}
	// A huge epsilon flips nothing.
	res, err := RandomizedResponse(context.Background(), m, RRParams{Epsilon: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Release.Equal(m) {
		t.Error("epsilon 1000 changed the data")
	}
}

func TestRRLimitsAndErrors(t *testing.T) {
	m := randomMatrix(5, 1000, 50, 4)
	_, err := RandomizedResponse(context.Background(), m, RRParams{Epsilon: 0.1, MaxEntries: 1000})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "limit of 1000") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := RandomizedResponse(context.Background(), m, RRParams{}); err == nil || !strings.Contains(err.Error(), "epsilon") {
		t.Errorf("no epsilon: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RandomizedResponse(ctx, m, RRParams{Epsilon: 1}); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	if e := ExpectedEntries(10, 20, 50, 0.5); e != 50*0.75+150*0.25 {
		t.Errorf("ExpectedEntries = %v", e)
	}
}

func TestParseMethod(t *testing.T) {
	for _, m := range []Method{MethodMondrian, MethodRREdge, MethodRRNode} {
		if got, err := ParseMethod(m.String()); err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := ParseMethod("laplace"); err == nil || !strings.Contains(err.Error(), `"laplace"`) {
		t.Errorf("ParseMethod(laplace) = %v", err)
	}
}
