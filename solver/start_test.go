package solver

import (
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

func TestParseStart(t *testing.T) {
	for _, v := range []Start{StartBoth, StartMondrian} {
		got, err := ParseStart(v.String())
		if err != nil || got != v {
			t.Errorf("ParseStart(%q) = %v, %v", v.String(), got, err)
		}
	}
	if _, err := ParseStart("meyerson"); err == nil || !strings.Contains(err.Error(), `"meyerson"`) {
		t.Errorf("ParseStart(meyerson) error = %v", err)
	}
}

// TestStartMondrian: on power-law user lists, where the Mondrian
// candidate wins, StartMondrian gives a release as good as StartBoth's
// (not the same: refine's nearest points come from a search of its own),
// the same whatever the workers, without a facility cost; on uniform
// random rows, where Meyerson's candidate wins, its release differs and is
// still valid.
func TestStartMondrian(t *testing.T) {
	lists, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 20000, Columns: 20000, MeanDegree: 10, Zipf: 1.1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	random := randomMatrix(2, 500, 40, 5)
	for _, md := range allModes {
		both := solveChecked(t, lists, Params{K: 8, Mode: md, Seed: 1})
		jBoth := jaccard(t, lists, both)
		var first string
		for _, w := range []int{1, 2} {
			mon := solveChecked(t, lists, Params{K: 8, Mode: md, Seed: 1, Start: StartMondrian, Workers: w})
			if h := releaseHash(mon.Release); first == "" {
				first = h
			} else if h != first {
				t.Errorf("lists %s: mondrian release %s with workers %d, %s with 1", md, h, w, first)
			}
			if j := jaccard(t, lists, mon); j < jBoth-0.001 {
				t.Errorf("lists %s workers %d: mondrian Jaccard %.4f, both %.4f", md, w, j, jBoth)
			}
			if got := mon.Info.GetStart(); got != "mondrian" {
				t.Errorf("lists %s: info start %q", md, got)
			}
			if mon.Info.GetFacilityCost() != 0 || both.Info.GetFacilityCost() == 0 {
				t.Errorf("lists %s: facility cost %v (mondrian), %v (both)", md, mon.Info.GetFacilityCost(), both.Info.GetFacilityCost())
			}
			// No restarts ran; the neighbour search (for refine) did.
			if mon.Info.GetRestarts() != 0 || both.Info.GetRestarts() != DefaultRestarts || !strings.HasPrefix(mon.Info.GetNeighbourSearch(), "bounded: knn") {
				t.Errorf("lists %s: restarts %d (mondrian), %d (both); search %q (mondrian), %q (both)", md,
					mon.Info.GetRestarts(), both.Info.GetRestarts(), mon.Info.GetNeighbourSearch(), both.Info.GetNeighbourSearch())
			}
		}
		both = solveChecked(t, random, Params{K: 6, Mode: md, Seed: 1})
		mon := solveChecked(t, random, Params{K: 6, Mode: md, Seed: 1, Start: StartMondrian})
		if releaseHash(both.Release) == releaseHash(mon.Release) {
			t.Errorf("random %s: mondrian gave both's release; Meyerson's candidate should win there", md)
		}
	}
}

func TestStartParams(t *testing.T) {
	cases := []struct {
		p    Params
		want string
	}{
		{Params{K: 2, Start: StartMondrian}, ""},
		{Params{K: 2, Start: StartMondrian, Variant: Paper}, "start mondrian needs variant improved"},
		{Params{K: 2, Start: Start(9)}, "invalid start 9"},
	}
	for _, c := range cases {
		err := CheckParams(c.p, 10)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckParams(%+v) = %v, want %q", c.p, err, c.want)
		}
	}
}

// jaccard is the Jaccard of res's release of m.
func jaccard(t *testing.T, m *matrix.Matrix, res *Result) float64 {
	t.Helper()
	rep, err := verify.Measure(m, res.Release)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Jaccard
}
