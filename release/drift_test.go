package release

import (
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// TestDriftOf: every figure of both reports in order, the lost features
// that came and went, and the line that says it.
func TestDriftOf(t *testing.T) {
	lost := func(names ...string) *smoothanonpb.FeatureAccounting {
		in := &smoothanonpb.FeatureInputFigures{Features: 50, Lost: int64(len(names))}
		for i, n := range names {
			in.LostMostHeld = append(in.LostMostHeld, &smoothanonpb.FeatureCount{Feature: uint32(i), Name: n, Held: 3})
		}
		return &smoothanonpb.FeatureAccounting{Input: in, Release: &smoothanonpb.FeatureReleaseFigures{Features: 40}}
	}
	prev := &smoothanonpb.RunReport{Date: "2026-11-30", RunId: "r1", Rows: 100, EntriesIn: 1000, EntriesOut: 600, Jaccard: 0.5,
		SuppressedFraction: 0.4, CreatedFraction: 0.1, Classes: 10, MinClass: 8, Features: lost("a", "b")}
	rep := &smoothanonpb.RunReport{Rows: 110, EntriesIn: 1100, EntriesOut: 600, Jaccard: 0.4,
		SuppressedFraction: 0.5, CreatedFraction: 0.1, Classes: 11, MinClass: 8, Features: lost("b", "c", "d")}
	d := driftOf(rep, prev, "gs://b/r-2026-11-30.json")
	var names []string
	for _, f := range d.Figures {
		names = append(names, f.Name)
	}
	want := "rows entries_in entries_out jaccard suppressed_fraction created_fraction classes min_class mean_class features features_released features_lost"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("figures %q, want %q", got, want)
	}
	if f := d.Figures[3]; f.Previous != 0.5 || f.Now != 0.4 {
		t.Errorf("jaccard %v", f)
	}
	if f := d.Figures[8]; f.Previous != 10 || f.Now != 10 {
		t.Errorf("mean_class %v, want 10 both", f)
	}
	if len(d.NewlyLost) != 2 || d.NewlyLost[0].Name != "c" || d.NewlyLost[1].Name != "d" || len(d.NoLongerLost) != 1 || d.NoLongerLost[0].Name != "a" {
		t.Errorf("newly lost %v, no longer lost %v", d.NewlyLost, d.NoLongerLost)
	}
	line := driftLine(d)
	for _, w := range []string{"since 2026-11-30 (gs://b/r-2026-11-30.json): ", "rows 100 → 110 (+10.0%)", "jaccard 0.5000 → 0.4000 (-10.00 points)",
		"features_lost 2 → 3 (+50.0%)", "2 listed features newly lost"} {
		if !strings.Contains(line, w) {
			t.Errorf("line %q lacks %q", line, w)
		}
	}
	// Without accounting in one of them: the run's figures only; ids (no
	// names) are matched by id.
	prev.Features = nil
	if d := driftOf(rep, prev, "p.json"); len(d.Figures) != 9 || d.NewlyLost != nil || !strings.HasPrefix(driftLine(d), "since 2026-11-30 (p.json): ") {
		t.Errorf("drift without the previous accounting: %v", d)
	}
	byID := []*smoothanonpb.FeatureCount{{Feature: 7}, {Feature: 9}}
	if got := missingFrom(byID, byID[:1]); len(got) != 1 || got[0].Feature != 9 {
		t.Errorf("missingFrom by id: %v", got)
	}
}
