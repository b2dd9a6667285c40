package solver

import (
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
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
// candidate wins, StartMondrian gives StartBoth's release (whatever the
// workers) without a facility cost; on uniform random rows, where
// Meyerson's candidate wins, its release differs and is still valid.
func TestStartMondrian(t *testing.T) {
	lists, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 20000, Columns: 20000, MeanDegree: 10, Zipf: 1.1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	random := randomMatrix(2, 500, 40, 5)
	for _, md := range allModes {
		both := solveChecked(t, lists, Params{K: 8, Mode: md, Seed: 1})
		for _, w := range []int{1, 2} {
			mon := solveChecked(t, lists, Params{K: 8, Mode: md, Seed: 1, Start: StartMondrian, Workers: w})
			if a, b := releaseHash(both.Release), releaseHash(mon.Release); a != b {
				t.Errorf("lists %s workers %d: mondrian release %s, both %s", md, w, b, a)
			}
			if got := mon.Info.GetStart(); got != "mondrian" {
				t.Errorf("lists %s: info start %q", md, got)
			}
			if mon.Info.GetFacilityCost() != 0 || both.Info.GetFacilityCost() == 0 {
				t.Errorf("lists %s: facility cost %v (mondrian), %v (both)", md, mon.Info.GetFacilityCost(), both.Info.GetFacilityCost())
			}
			// No restarts ran; the neighbour search (for refine) did.
			if mon.Info.GetRestarts() != 0 || both.Info.GetRestarts() != DefaultRestarts || mon.Info.GetNeighbourSearch() != both.Info.GetNeighbourSearch() || mon.Info.GetNeighbourSearch() == "" {
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
