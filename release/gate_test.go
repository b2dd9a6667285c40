package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

func ptr(v float64) *float64 { return &v }

func TestGateCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		gate Gate
		want string // "" for valid
	}{
		{"none", Gate{}, ""},
		{"all", Gate{MinJaccard: ptr(0.3), MaxSuppressed: ptr(0.5), MaxCreated: ptr(0), MaxDrift: ptr(0.05), Previous: "r.json"}, ""},
		{"jaccard above 1", Gate{MinJaccard: ptr(1.5)}, "--min_jaccard 1.5"},
		{"negative", Gate{MaxCreated: ptr(-0.1)}, "--max_created -0.1"},
		{"NaN", Gate{MaxSuppressed: ptr(nan())}, "--max_suppressed NaN"},
		{"drift without previous", Gate{MaxDrift: ptr(0.1)}, "--max_drift needs --previous_report"},
		{"previous without drift: the report's drift only", Gate{Previous: "r.json"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.gate.Check()
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("Check() = %v, want %q", err, c.want)
			}
		})
	}
}

func nan() float64 { z := 0.0; return z / z }

func TestGateMissed(t *testing.T) {
	rep := &smoothanonpb.RunReport{Jaccard: 0.40, SuppressedFraction: 0.30, CreatedFraction: 0.10}
	prev := &smoothanonpb.RunReport{Jaccard: 0.50, SuppressedFraction: 0.28, CreatedFraction: 0.10}
	for _, c := range []struct {
		name string
		gate Gate
		prev *smoothanonpb.RunReport
		want []string // substrings, one per line missed, in order
	}{
		{"none", Gate{}, prev, nil},
		{"passes", Gate{MinJaccard: ptr(0.4), MaxSuppressed: ptr(0.3), MaxCreated: ptr(0.1)}, nil, nil},
		{"jaccard", Gate{MinJaccard: ptr(0.41)}, nil, []string{"jaccard 0.4000 is below --min_jaccard 0.41"}},
		{"suppressed", Gate{MaxSuppressed: ptr(0.29)}, nil, []string{"suppressed 0.3000 of the entries, above --max_suppressed 0.29"}},
		{"created none allowed", Gate{MaxCreated: ptr(0)}, nil, []string{"created 0.1000"}},
		{"drift", Gate{MaxDrift: ptr(0.05), Previous: "p"}, prev, []string{"jaccard moved from 0.5000 to 0.4000"}},
		{"drift within", Gate{MaxDrift: ptr(0.1), Previous: "p"}, prev, nil},
		{"drift unchecked", Gate{MaxDrift: ptr(0), Previous: "p"}, nil, nil},
		{"all", Gate{MinJaccard: ptr(0.5), MaxCreated: ptr(0.05), MaxDrift: ptr(0.01), Previous: "p"}, prev,
			[]string{"--min_jaccard", "--max_created", "jaccard moved", "suppressed moved"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.gate.missed(rep, c.prev)
			if len(got) != len(c.want) {
				t.Fatalf("missed %q, want %d lines like %q", got, len(c.want), c.want)
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("line %d: %q, want %q", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestReadPrevious(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, rep *smoothanonpb.RunReport) string {
		b, err := EncodeReport(rep)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	good := write("good.json", &smoothanonpb.RunReport{EntriesIn: 10, Jaccard: 0.4, Published: false})
	empty := write("empty.json", &smoothanonpb.RunReport{NotPublished: "interrupted"})
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"a": 1}`), 0o644)

	if prev, why, err := readPrevious(ctx, good); err != nil || prev == nil || why != "" || prev.Jaccard != 0.4 {
		t.Errorf("a report with figures (published or not): %v %q %v", prev, why, err)
	}
	if prev, why, err := readPrevious(ctx, filepath.Join(dir, "none.json")); err != nil || prev != nil || !strings.Contains(why, "no report at") {
		t.Errorf("missing: %v %q %v", prev, why, err)
	}
	if prev, why, err := readPrevious(ctx, empty); err != nil || prev != nil || !strings.Contains(why, "has no figures") {
		t.Errorf("without figures: %v %q %v", prev, why, err)
	}
	if _, _, err := readPrevious(ctx, other); err == nil || !strings.Contains(err.Error(), "is not a run report") {
		t.Errorf("not a report: %v", err)
	}
	big := filepath.Join(dir, "input.parquet")
	os.WriteFile(big, make([]byte, maxReportSize+1), 0o644)
	if _, _, err := readPrevious(ctx, big); err == nil || !strings.Contains(err.Error(), "is not a run report (1048577 bytes)") {
		t.Errorf("a large file: %v", err)
	}
	if _, _, err := readPrevious(ctx, dir); err == nil {
		t.Errorf("a directory: no error")
	}
}

// TestGateDrift runs the lifecycle twice against a previous report: a
// release within the drift is published and its report records the
// gate; one beyond it publishes nothing and its report says why.
func TestGateDrift(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	prevPath := filepath.Join(dir, "night1.json")
	b, _ := EncodeReport(&smoothanonpb.RunReport{EntriesIn: 4, Jaccard: 0.5, Published: true})
	os.WriteFile(prevPath, b, 0o644)
	for _, c := range []struct {
		jaccard   float64
		published bool
	}{{0.52, true}, {0.40, false}} {
		in, out := testInput(t), filepath.Join(t.TempDir(), "rel")
		p := dirPlan(in, out, "n")
		p.Gate = Gate{MaxDrift: ptr(0.05), Previous: prevPath}
		r, err := Begin(ctx, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep := fakeJob(t, r, rowsOf("a", 4), 1)
		rep.EntriesIn, rep.Jaccard = 4, c.jaccard
		rep, err = r.Finish(Outcome{Report: rep})
		var ge *GateError
		switch {
		case c.published && err != nil:
			t.Fatalf("jaccard %v: %v", c.jaccard, err)
		case !c.published && !errors.As(err, &ge):
			t.Fatalf("jaccard %v: %v, want a GateError", c.jaccard, err)
		}
		q := rep.GetQualityGate()
		if q.GetMaxDrift() != 0.05 || !q.GetDriftChecked() || q.GetPreviousReport() != prevPath || q.MinJaccard != nil {
			t.Errorf("report's gate %v", q)
		}
		if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); (err == nil) != c.published {
			t.Errorf("jaccard %v: published = %v, want %v", c.jaccard, err == nil, c.published)
		}
		if !c.published && (!slices.ContainsFunc(q.GetMissed(), func(s string) bool { return strings.Contains(s, "moved from 0.5000 to 0.4000") }) || !strings.Contains(rep.NotPublished, "quality gate")) {
			t.Errorf("missed %q, not published %q", q.GetMissed(), rep.NotPublished)
		}
	}
	// A first night: no previous report; drift is not checked, and said so.
	in, out := testInput(t), filepath.Join(t.TempDir(), "rel")
	p := dirPlan(in, out, "n")
	p.Gate = Gate{MaxDrift: ptr(0.05), Previous: filepath.Join(dir, "night0.json")}
	var stderr strings.Builder
	r, err := Begin(ctx, p, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	rep := fakeJob(t, r, rowsOf("a", 4), 1)
	rep.EntriesIn, rep.Jaccard = 4, 0.1
	if rep, err = r.Finish(Outcome{Report: rep}); err != nil {
		t.Fatal(err)
	}
	if q := rep.GetQualityGate(); q.GetDriftChecked() || !strings.Contains(q.GetDriftUnchecked(), "no report at") || !strings.Contains(stderr.String(), "drift not checked") {
		t.Errorf("first night: gate %v, stderr %q", q, stderr.String())
	}
}
