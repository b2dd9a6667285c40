package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/storage"
)

// Gate is the quality gate of an unattended run: thresholds a valid
// release must meet to be published. It is checked after verification
// and before the claim; a release that misses one is not published, its
// key is not saved, and its report says which it missed (GateError).
//
// Jaccard and the fractions are the run report's (RunReport.jaccard,
// suppressed_fraction and created_fraction: entries suppressed or created
// over the input's entries). A nil threshold is not checked; the zero
// Gate checks nothing.
type Gate struct {
	// MinJaccard is the smallest Jaccard published. Optional; in [0, 1].
	MinJaccard *float64
	// MaxSuppressed and MaxCreated are the largest fractions of the
	// input's entries suppressed and created. Optional; ≥ 0.
	MaxSuppressed, MaxCreated *float64
	// MaxDrift is the largest change of each of the three figures
	// against the report at Previous. Optional; ≥ 0; requires Previous.
	MaxDrift *float64
	// Previous is the previous run's report (--metrics_out of the night
	// before), read when the run begins: the report's Drift compares the
	// two, and MaxDrift is checked against it. Optional; required with
	// MaxDrift. If it
	// does not exist (a first night) or holds no figures (a run that
	// stopped before verifying), drift is not checked and the report
	// says so. A report of a night that published nothing but has its
	// figures (one the gate refused) is still the reference.
	Previous string
}

// GateError is a valid release that missed its quality gate: nothing was
// published.
type GateError struct{ Missed []string }

func (e *GateError) Error() string {
	return "the release missed its quality gate: " + strings.Join(e.Missed, "; ") + "; nothing published"
}

// isSet reports whether g checks anything.
func (g Gate) isSet() bool {
	return g.MinJaccard != nil || g.MaxSuppressed != nil || g.MaxCreated != nil || g.MaxDrift != nil
}

// Check validates the thresholds: ranges, and Previous with MaxDrift.
func (g Gate) Check() error {
	for _, t := range []struct {
		flag string
		v    *float64
		max  float64
	}{
		{"min_jaccard", g.MinJaccard, 1},
		{"max_suppressed", g.MaxSuppressed, math.Inf(1)},
		{"max_created", g.MaxCreated, math.Inf(1)},
		{"max_drift", g.MaxDrift, 1},
	} {
		if t.v != nil && !(*t.v >= 0 && *t.v <= t.max) {
			return fmt.Errorf("--%s %g: want a fraction between 0 and %g", t.flag, *t.v, t.max)
		}
	}
	switch {
	case g.MaxDrift != nil && g.Previous == "":
		return errors.New("--max_drift needs --previous_report, the report to measure the drift against")
	}
	return nil
}

// missed returns one line per threshold rep misses; prev is the previous
// report (nil: drift not checked).
func (g Gate) missed(rep, prev *smoothanonpb.RunReport) []string {
	var out []string
	if g.MinJaccard != nil && rep.Jaccard < *g.MinJaccard {
		out = append(out, fmt.Sprintf("jaccard %.4f is below --min_jaccard %g", rep.Jaccard, *g.MinJaccard))
	}
	if g.MaxSuppressed != nil && rep.SuppressedFraction > *g.MaxSuppressed {
		out = append(out, fmt.Sprintf("suppressed %.4f of the entries, above --max_suppressed %g", rep.SuppressedFraction, *g.MaxSuppressed))
	}
	if g.MaxCreated != nil && rep.CreatedFraction > *g.MaxCreated {
		out = append(out, fmt.Sprintf("created %.4f of the entries, above --max_created %g", rep.CreatedFraction, *g.MaxCreated))
	}
	if g.MaxDrift != nil && prev != nil {
		for _, f := range []struct {
			name      string
			now, then float64
		}{
			{"jaccard", rep.Jaccard, prev.Jaccard},
			{"suppressed", rep.SuppressedFraction, prev.SuppressedFraction},
			{"created", rep.CreatedFraction, prev.CreatedFraction},
		} {
			if math.Abs(f.now-f.then) > *g.MaxDrift {
				out = append(out, fmt.Sprintf("%s moved from %.4f to %.4f since the previous report, more than --max_drift %g", f.name, f.then, f.now, *g.MaxDrift))
			}
		}
	}
	return out
}

// maxReportSize bounds what readPrevious reads: a run report is a few
// kilobytes; a path naming a data file by mistake is refused unread.
const maxReportSize = 1 << 20

// readPrevious reads the previous report for drift. It returns nil and
// why when there is no reference (no such report, or one without
// figures); an unreadable or malformed report is an error.
func readPrevious(ctx context.Context, uri string) (*smoothanonpb.RunReport, string, error) {
	a, err := storage.Stat(ctx, uri)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, "no report at " + uri, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("--previous_report %w", err)
	}
	if a.Size > maxReportSize {
		return nil, "", fmt.Errorf("--previous_report %s is not a run report (%d bytes)", uri, a.Size)
	}
	b, err := storage.ReadFile(ctx, uri)
	if err != nil {
		return nil, "", fmt.Errorf("--previous_report %w", err)
	}
	if !isReport(b) {
		return nil, "", fmt.Errorf("--previous_report %s is not a run report", uri)
	}
	prev, err := decodeReport(b)
	if err != nil {
		return nil, "", fmt.Errorf("--previous_report %s: %w", uri, err)
	}
	if prev.EntriesIn == 0 {
		return nil, uri + " has no figures (its run stopped before verifying)", nil
	}
	return prev, "", nil
}

// record puts the gate, and what it found, into rep.
func (g Gate) record(rep *smoothanonpb.RunReport, prev *smoothanonpb.RunReport, unchecked string, missed []string) {
	if !g.isSet() {
		rep.QualityGate = nil
		return
	}
	q := &smoothanonpb.QualityGate{PreviousReport: g.Previous, Missed: missed}
	for _, t := range []struct {
		v   *float64
		dst **float64
	}{
		{g.MinJaccard, &q.MinJaccard}, {g.MaxSuppressed, &q.MaxSuppressed}, {g.MaxCreated, &q.MaxCreated}, {g.MaxDrift, &q.MaxDrift},
	} {
		if t.v != nil {
			*t.dst = proto.Float64(*t.v)
		}
	}
	if g.MaxDrift != nil {
		q.DriftChecked, q.DriftUnchecked = prev != nil, unchecked
	}
	rep.QualityGate = q
}
