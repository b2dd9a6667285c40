package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// TestQualityGate: a valid release that misses a threshold of run, solve
// or baseline publishes nothing, saves no key, writes a report that says
// which threshold it missed, and exits 5; one that meets them publishes;
// drift is measured against the night before's report, named by a
// {date-1} template; bad thresholds are refused before any work.
func TestQualityGate(t *testing.T) {
	d := t.TempDir()
	// Users of four groups, each with two features of its own that
	// nobody shares: a release keeps a third of the entries (Jaccard 1/3).
	lossy := filepath.Join(d, "lossy.parquet")
	m := matrix.New(0, 0)
	for i := range 60 {
		m.Append(fmt.Sprintf("user%03d", i), []uint32{uint32(i % 4), uint32(100 + i), uint32(200 + i)})
	}
	if err := matrix.WriteMatrix(lossy, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(d, "in.parquet")
	writeSolveInput(t, in, 60)
	report := func(path string) map[string]any {
		t.Helper()
		var r map[string]any
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &r) != nil {
			t.Fatalf("report %s: %v", path, err)
		}
		return r
	}
	for _, cmd := range [][]string{
		{"run", "--chunk_size", "40"},
		{"solve"},
		{"baseline", "--method", "mondrian"},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			out := filepath.Join(d, cmd[0]+".out")
			if cmd[0] != "run" {
				out += ".parquet"
			}
			key, rep := filepath.Join(d, cmd[0]+".key"), filepath.Join(d, cmd[0]+".json")
			args := append(cmd, "--input", lossy, "--output", out, "--k", "4", "--pseudonym_key_out", key, "--metrics_out", rep)
			code, _, stderr := cli(append(args, "--min_jaccard", "0.5", "--max_created", "0")...)
			if code != exitGate || !strings.Contains(stderr, "missed its quality gate: jaccard") {
				t.Fatalf("exit %d, want %d: %s", code, exitGate, stderr)
			}
			for _, p := range []string{out, key} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s exists after a missed gate", p)
				}
			}
			r := report(rep)
			gate, _ := r["quality_gate"].(map[string]any)
			if r["published"] != false || !strings.Contains(r["not_published"].(string), "below --min_jaccard 0.5") || gate["min_jaccard"] != 0.5 || gate["max_created"] != 0.0 {
				t.Errorf("report: published %v, not_published %q, gate %v", r["published"], r["not_published"], gate)
			}
			if len(gate["missed"].([]any)) != 1 { // nothing created: only the Jaccard missed
				t.Errorf("missed %v, want only jaccard", gate["missed"])
			}
			if code, _, stderr := cli(append(args, "--min_jaccard", "0.3")...); code != 0 {
				t.Fatalf("a release meeting its gate: exit %d: %s", code, stderr)
			}
			if _, err := os.Stat(key); err != nil {
				t.Errorf("no key for the published release: %v", err)
			}
		})
	}

	// Two nights: the second's drift is measured against the first's
	// report through {date-1}.
	nightly := func(date string, drift string) (int, string) {
		code, _, stderr := cli("run", "--input", in, "--output", filepath.Join(d, "rel-{date}"), "--k", "4", "--chunk_size", "40",
			"--date", date, "--metrics_out", filepath.Join(d, "report-{date}.json"),
			"--max_drift", drift, "--previous_report", filepath.Join(d, "report-{date-1}.json"))
		return code, stderr
	}
	if code, stderr := nightly("2026-11-01", "0"); code != 0 || !strings.Contains(stderr, "drift not checked: no report at") {
		t.Fatalf("first night: exit %d: %s", code, stderr)
	}
	// The same input under a fresh key: the figures move a little.
	if code, stderr := nightly("2026-11-02", "0.5"); code != 0 {
		t.Fatalf("second night within drift: exit %d: %s", code, stderr)
	}
	if gate := report(filepath.Join(d, "report-2026-11-02.json"))["quality_gate"].(map[string]any); gate["drift_checked"] != true || !strings.HasSuffix(gate["previous_report"].(string), "report-2026-11-01.json") {
		t.Errorf("second night's gate: %v", gate)
	}
	r1 := report(filepath.Join(d, "report-2026-11-02.json"))
	first := r1["jaccard"].(float64)
	// A third night whose users share far fewer features: its Jaccard
	// falls well beyond a drift of 0.1.
	if err := matrix.WriteMatrix(in, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, stderr := nightly("2026-11-03", "0.1"); code != exitGate || !strings.Contains(stderr, "since the previous report") {
		t.Fatalf("third night, another input: exit %d (J was %v): %s", code, first, stderr)
	}
	if _, err := os.Stat(filepath.Join(d, "rel-2026-11-03")); err == nil {
		t.Error("third night published")
	}
	// Each night's report says what moved since the one before.
	drift := func(date string) map[string]any {
		dr, _ := report(filepath.Join(d, "report-"+date+".json"))["drift"].(map[string]any)
		return dr
	}
	if dr := drift("2026-11-03"); dr["previous_date"] != "2026-11-02" || len(dr["figures"].([]any)) < 9 {
		t.Errorf("third night's drift: %v", dr)
	} else if f := dr["figures"].([]any)[3].(map[string]any); f["name"] != "jaccard" || f["previous"] != first {
		t.Errorf("third night's drift of the Jaccard: %v, want previous %v", f, first)
	}
	if dr := drift("2026-11-01"); dr != nil {
		t.Errorf("first night has a drift: %v", dr)
	}
	// --previous_report alone: the drift is reported, nothing is refused
	// for it (the fourth night follows the refused third, whose report
	// holds its figures).
	code, _, stderr := cli("run", "--input", in, "--output", filepath.Join(d, "rel-{date}"), "--k", "4", "--chunk_size", "40",
		"--date", "2026-11-04", "--metrics_out", filepath.Join(d, "report-{date}.json"), "--previous_report", filepath.Join(d, "report-{date-1}.json"))
	if code != 0 || !strings.Contains(stderr, "since 2026-11-03") || !strings.Contains(stderr, "jaccard") {
		t.Errorf("fourth night, drift reported only: exit %d: %s", code, stderr)
	}
	if r := report(filepath.Join(d, "report-2026-11-04.json")); r["quality_gate"] != nil || r["drift"] == nil {
		t.Errorf("fourth night: gate %v, drift %v; want no gate and a drift", r["quality_gate"], r["drift"])
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--min_jaccard", "2"}, "--min_jaccard 2: want a fraction"},
		{[]string{"--max_created", "-1"}, "--max_created -1"},
		{[]string{"--max_drift", "0.1"}, "--max_drift needs --previous_report"},
		{[]string{"--min_jaccard", "high"}, "invalid value"},
	} {
		for _, cmd := range []string{"run", "solve"} {
			out := filepath.Join(d, "refused-"+cmd)
			code, _, stderr := cli(append([]string{cmd, "--input", in, "--output", out, "--k", "4"}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("%s %q: exit %d %q, want 2 with %q", cmd, c.args, code, stderr, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s %q wrote its output", cmd, c.args)
			}
		}
	}
}
