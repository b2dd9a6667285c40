package release

import (
	"fmt"
	"strings"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// driftOf compares rep with prev, the report read from uri
// (--previous_report).
func driftOf(rep, prev *smoothanonpb.RunReport, uri string) *smoothanonpb.Drift {
	d := &smoothanonpb.Drift{PreviousReport: uri, PreviousDate: prev.Date, PreviousRunId: prev.RunId}
	add := func(name string, then, now float64) {
		d.Figures = append(d.Figures, &smoothanonpb.FigureChange{Name: name, Previous: then, Now: now})
	}
	add("rows", float64(prev.Rows), float64(rep.Rows))
	add("entries_in", float64(prev.EntriesIn), float64(rep.EntriesIn))
	add("entries_out", float64(prev.EntriesOut), float64(rep.EntriesOut))
	add("jaccard", prev.Jaccard, rep.Jaccard)
	add("suppressed_fraction", prev.SuppressedFraction, rep.SuppressedFraction)
	add("created_fraction", prev.CreatedFraction, rep.CreatedFraction)
	add("classes", float64(prev.Classes), float64(rep.Classes))
	add("min_class", float64(prev.MinClass), float64(rep.MinClass))
	add("mean_class", perClass(prev), perClass(rep))
	pf, nf := prev.GetFeatures(), rep.GetFeatures()
	if pf.GetInput() == nil || nf.GetInput() == nil {
		return d
	}
	add("features", float64(pf.Input.Features), float64(nf.Input.Features))
	add("features_released", float64(pf.GetRelease().GetFeatures()), float64(nf.GetRelease().GetFeatures()))
	add("features_lost", float64(pf.Input.Lost), float64(nf.Input.Lost))
	d.NewlyLost = missingFrom(nf.Input.LostMostHeld, pf.Input.LostMostHeld)
	d.NoLongerLost = missingFrom(pf.Input.LostMostHeld, nf.Input.LostMostHeld)
	return d
}

// perClass is rep's rows per class, 0 without classes.
func perClass(rep *smoothanonpb.RunReport) float64 {
	if rep.Classes == 0 {
		return 0
	}
	return float64(rep.Rows) / float64(rep.Classes)
}

// missingFrom lists the features of a that b does not list (by id, or by
// name for named features).
func missingFrom(a, b []*smoothanonpb.FeatureCount) []*smoothanonpb.FeatureCount {
	in := map[string]bool{}
	key := func(f *smoothanonpb.FeatureCount) string {
		if f.Name != "" {
			return "n" + f.Name
		}
		return fmt.Sprint("i", f.Feature)
	}
	for _, f := range b {
		in[key(f)] = true
	}
	var out []*smoothanonpb.FeatureCount
	for _, f := range a {
		if !in[key(f)] {
			out = append(out, f)
		}
	}
	return out
}

// driftLine says in one line what moved: the figures of the gate and
// the population, then the loss of features.
func driftLine(d *smoothanonpb.Drift) string {
	since := d.PreviousReport
	if d.PreviousDate != "" {
		since = d.PreviousDate + " (" + d.PreviousReport + ")"
	}
	var parts []string
	for _, f := range d.Figures {
		switch f.Name {
		case "jaccard", "suppressed_fraction", "created_fraction":
			parts = append(parts, fmt.Sprintf("%s %.4f → %.4f (%+.2f points)", f.Name, f.Previous, f.Now, 100*(f.Now-f.Previous)))
		case "rows", "classes", "features_lost":
			parts = append(parts, fmt.Sprintf("%s %.0f → %.0f (%s)", f.Name, f.Previous, f.Now, relative(f.Previous, f.Now)))
		}
	}
	if n := len(d.NewlyLost); n > 0 {
		parts = append(parts, fmt.Sprintf("%d listed features newly lost", n))
	}
	return "since " + since + ": " + strings.Join(parts, ", ")
}

// relative is the change from a to b in percent of a.
func relative(a, b float64) string {
	if a == 0 {
		if b == 0 {
			return "same"
		}
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", 100*(b-a)/a)
}
