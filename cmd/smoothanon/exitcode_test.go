package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/release"
)

// TestRunErrClasses maps each class of pipeline error to the exit code
// main.go's package doc promises.
func TestRunErrClasses(t *testing.T) {
	if runErr(nil) != nil {
		t.Error("runErr(nil) is an error")
	}
	for _, c := range []struct {
		name string
		err  error
		code int
	}{
		{"input", &pipeline.InputError{Err: errors.New("no such file")}, 2},
		{"verification", fmt.Errorf("job: %w", pipeline.ErrVerification), 1},
		{"runner", errors.New("job server unreachable"), 3},
		{"lost race", &release.LostRaceError{Output: "o"}, exitLostRace},
		{"quality gate", fmt.Errorf("run: %w", &release.GateError{Missed: []string{"jaccard"}}), exitGate},
	} {
		var ee *exitError
		if err := runErr(c.err); !errors.As(err, &ee) || ee.code != c.code {
			t.Errorf("%s error: %v, want exit code %d", c.name, err, c.code)
		}
	}
}

// TestExitCodes runs the CLI into each documented exit code.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	m, err := gen.SBM(gen.SBMParams{N: 64, S: 8, Q: 0.6, P: 0.01, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.parquet")
	if err := matrix.WriteMatrix(in, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"help"}, 0},
		{"command help", []string{"run", "-h"}, 0},
		{"no command", nil, 2},
		{"unknown command", []string{"nosuch"}, 2},
		{"unknown flag", []string{"run", "--nosuch"}, 2},
		{"bad k", []string{"run", "--input", in, "--output", filepath.Join(dir, "o1"), "--k", "1"}, 2},
		{"missing input", []string{"run", "--input", filepath.Join(dir, "none.parquet"), "--output", filepath.Join(dir, "o2"), "--k", "2"}, 2},
		// Dataflow without --project fails at submission, before any network.
		{"runner failure", []string{"run", "--input", in, "--output", filepath.Join(dir, "o3"), "--k", "2", "--runner", "dataflow"}, 3},
		{"invalid release", []string{"verify", "--input", in, "--output", in, "--k", "64"}, 1},
	} {
		if code := runMain(c.args, io.Discard, io.Discard); code != c.code {
			t.Errorf("%s (%q): exit code %d, want %d", c.name, c.args, code, c.code)
		}
	}
}

func TestCommandArgsByName(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"/template/smoothanon-run", "--k=8"}, "[run --k=8]"},
		{[]string{"smoothanon", "run", "--k=8"}, "[run --k=8]"},
		{[]string{"/usr/bin/smoothanon-nosuch", "--k=8"}, "[--k=8]"},
	} {
		if got := fmt.Sprint(commandArgs(c.argv)); got != c.want {
			t.Errorf("commandArgs(%q) = %s, want %s", c.argv, got, c.want)
		}
	}
}

func TestRunnerAliases(t *testing.T) {
	for alias, name := range map[string]string{"DataflowRunner": "dataflow", "flink": "flink", "PortableRunner": "universal", "DirectRunner": "direct", "": ""} {
		if got := runnerName(alias); got != name {
			t.Errorf("runnerName(%q) = %q, want %q", alias, got, name)
		}
	}
}

// TestFlagErrorsOneLine: a bad flag is reported once, on one line naming
// the flag and the value, without the flag list; -h prints the flag list.
func TestFlagErrorsOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--start", "bogus"}, []string{"-start", `"bogus"`, "smoothanon run -h"}},
		{[]string{"run", "--chunk_key", "bogus"}, []string{"-chunk_key", `"bogus"`}},
		{[]string{"solve", "--mode", "bogus"}, []string{"-mode", `"bogus"`, "smoothanon solve -h"}},
		{[]string{"run", "--nosuch"}, []string{"-nosuch"}},
	} {
		var stderr strings.Builder
		if code := runMain(c.args, io.Discard, &stderr); code != 2 {
			t.Errorf("%q: exit code %d, want 2", c.args, code)
		}
		got := stderr.String()
		if strings.Count(got, "\n") != 1 {
			t.Errorf("%q: stderr is not one line:\n%s", c.args, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: stderr %q lacks %q", c.args, got, w)
			}
		}
	}
	var stderr strings.Builder
	if code := runMain([]string{"run", "-h"}, io.Discard, &stderr); code != 0 || !strings.Contains(stderr.String(), "-chunk_key") {
		t.Errorf("run -h: exit code %d, output lacks the flag list:\n%s", code, stderr.String())
	}
}
