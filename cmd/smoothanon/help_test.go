package main

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpOf returns the -h output of a command: its headings (lines ending
// in ':' without indent) and flags (first word of lines "  -name"), each
// with its line number.
func helpOf(t *testing.T, cmd string) (text string, headings, flags map[string]int) {
	t.Helper()
	var stderr strings.Builder
	if code := runMain([]string{cmd, "-h"}, io.Discard, &stderr); code != 0 {
		t.Fatalf("%s -h: exit code %d\n%s", cmd, code, stderr.String())
	}
	headings, flags = map[string]int{}, map[string]int{}
	flagLine := regexp.MustCompile(`^  -([\w.]+)`)
	for i, line := range strings.Split(stderr.String(), "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			if _, dup := flags[m[1]]; dup {
				t.Errorf("%s -h lists -%s twice", cmd, m[1])
			}
			flags[m[1]] = i
		} else if h, ok := strings.CutSuffix(line, ":"); ok && line != "" && line[0] != ' ' && !strings.HasPrefix(line, "Usage of") {
			headings[h] = i
		}
	}
	return stderr.String(), headings, flags
}

// TestHelpGrouped: run -h lists our flags first, by group (input and
// output, privacy, solver, runner and pipeline), then Beam's under their
// own heading; solve -h and baseline -h group theirs the same way.
func TestHelpGrouped(t *testing.T) {
	for _, c := range []struct {
		cmd    string
		groups []string
		// members lists flags by group; every other flag must be Beam's.
		members map[string][]string
	}{
		{"run", []string{groupIO, groupPrivacy, groupSolver, groupPipeline, groupGate, groupBeam}, map[string][]string{
			groupIO:       {"input", "input_shape", "user_column", "feature_column", "feature_values", "output", "output_shape", "overwrite", "run_id", "date", "metrics_out", "feature_report"},
			groupPrivacy:  {"k", "mode", "sensitive", "sensitive_k", "sensitive_policy", "user_ids", "pseudonym_key_file", "pseudonym_key_env", "pseudonym_key_out"},
			groupSolver:   {"seed", "variant", "search", "start", "beta", "restarts", "workers"},
			groupPipeline: {"runner", "chunk_size", "chunk_key", "spectral_iterations", "pool_share", "shards", "connect_timeout"},
			groupGate:     {"min_jaccard", "max_suppressed", "max_created", "max_drift", "previous_report"},
			groupBeam:     {"endpoint", "environment_type", "project", "region", "async", "dry_run", "worker_binary"},
		}},
		{"solve", []string{groupIO, groupPrivacy, groupSolver, groupGate}, map[string][]string{
			groupIO:      {"input", "output", "overwrite", "metrics_out", "feature_report", "quiet", "dedupe", "input_shape", "user_column", "feature_column", "feature_values", "connect_timeout"},
			groupPrivacy: {"k", "mode", "sensitive", "sensitive_k", "sensitive_policy", "user_ids", "pseudonym_key_file", "pseudonym_key_env", "pseudonym_key_out"},
			groupSolver:  {"seed", "variant", "search", "start", "beta", "restarts", "workers"},
			groupGate:    {"min_jaccard", "max_suppressed", "max_created", "max_drift", "previous_report"},
		}},
		{"assess", []string{groupIO, groupPrivacy, groupSolver, groupPipeline, groupBeam}, map[string][]string{
			groupIO:       {"input", "input_shape", "user_column", "feature_column", "feature_values", "report", "plot", "sample_rows"},
			groupPrivacy:  {"k", "mode", "sensitive", "sensitive_k", "sensitive_policy"},
			groupSolver:   {"seed", "variant", "search", "start", "beta", "restarts", "workers"},
			groupPipeline: {"chunk_size", "chunk_key", "spectral_iterations", "pool_share", "exact", "scratch", "runner", "connect_timeout"},
			groupBeam:     {"endpoint", "environment_type", "project", "region", "async", "dry_run", "worker_binary"},
		}},
		{"baseline", []string{groupIO, groupPrivacy, groupRR, groupGate}, map[string][]string{
			groupIO:      {"input", "output", "overwrite", "metrics_out", "feature_report", "quiet", "dedupe", "input_shape", "user_column", "feature_column", "feature_values", "connect_timeout"},
			groupPrivacy: {"method", "k", "epsilon", "sensitive", "sensitive_k", "sensitive_policy", "user_ids", "pseudonym_key_file", "pseudonym_key_env", "pseudonym_key_out"},
			groupRR:      {"seed", "max_entries"},
			groupGate:    {"min_jaccard", "max_suppressed", "max_created", "max_drift", "previous_report"},
		}},
	} {
		text, headings, flags := helpOf(t, c.cmd)
		var got []string
		for h := range headings {
			got = append(got, h)
		}
		slices.SortFunc(got, func(a, b string) int { return headings[a] - headings[b] })
		if !slices.Equal(got, c.groups) {
			t.Errorf("%s -h: headings %q, want %q", c.cmd, got, c.groups)
			continue
		}
		// groupOf is the heading above each line.
		groupOf := func(line int) string {
			g := ""
			for _, h := range c.groups {
				if headings[h] < line {
					g = h
				}
			}
			return g
		}
		listed := 0
		for _, g := range c.groups {
			for _, f := range c.members[g] {
				line, ok := flags[f]
				if !ok {
					t.Errorf("%s -h: no -%s", c.cmd, f)
				} else if groupOf(line) != g {
					t.Errorf("%s -h: -%s under %q, want %q", c.cmd, f, groupOf(line), g)
				}
			}
			if g != groupBeam {
				listed += len(c.members[g])
			}
		}
		// Every flag above Beam's heading is one of ours, listed above.
		ours := 0
		for _, line := range flags {
			if groupOf(line) != groupBeam {
				ours++
			}
		}
		if ours != listed {
			t.Errorf("%s -h: %d flags in our groups, want the %d this test lists:\n%s", c.cmd, ours, listed, text)
		}
		if c.cmd == "run" && !strings.Contains(text, "direct (runs prism") {
			t.Errorf("run -h does not say that --runner direct runs prism")
		}
		if c.cmd == "run" && flags["k"] > headings[groupBeam] {
			t.Errorf("run -h: -k below Beam's heading")
		}
		if c.cmd == "run" && len(flags)-ours < 50 {
			t.Errorf("run -h: %d Beam flags, want Beam's whole set", len(flags)-ours)
		}
	}
}
