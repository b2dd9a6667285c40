package main

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
)

// TestSolverFlags: solverFlags sets every field of solver.Params from its
// flag, for run and solve alike (the values need not make a valid solve:
// solver.CheckParams judges them later). want sets every field, so a new
// solver setting fails this test until it has a flag (and a line here).
func TestSolverFlags(t *testing.T) {
	args := []string{"--k", "5", "--mode", "nonsmooth", "--seed", "7", "--variant", "paper", "--search", "exact",
		"--start", "mondrian", "--beta", "3", "--restarts", "4", "--workers", "2"}
	want := solver.Params{K: 5, Mode: matrix.NonSmooth, Seed: 7, Variant: solver.Paper, Search: solver.Exact,
		Start: solver.StartMondrian, Beta: 3, Restarts: 4, Workers: 2}
	v := reflect.ValueOf(want)
	for i := range v.NumField() {
		if f := v.Type().Field(i); v.Field(i).IsZero() && !strings.HasPrefix(f.Name, "Sensitive") { // addSensitiveFlags' (TestSensitiveFlags)
			t.Errorf("solver.Params.%s: not set by this test's flags", f.Name)
		}
	}
	for _, cmd := range []string{"run", "solve"} {
		fs := newGroupedFlags(cmd, io.Discard)
		p, auto := solverFlags(fs, cmd)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if !reflect.DeepEqual(*p, want) || *auto {
			t.Errorf("%s: flags give %+v (auto start %v), want %+v", cmd, *p, *auto, want)
		}
	}

	defaults := solver.Params{Beta: solver.DefaultBeta, Restarts: solver.DefaultRestarts}
	for _, cmd := range []string{"run", "solve", "baseline"} {
		fs := newGroupedFlags(cmd, io.Discard)
		p, auto := solverFlags(fs, cmd)
		if cmd == "baseline" {
			defaults = solver.Params{}
		}
		if err := fs.Parse(nil); err != nil || !reflect.DeepEqual(*p, defaults) || *auto != (cmd == "run") {
			t.Errorf("%s: defaults %+v (auto start %v, %v), want %+v", cmd, *p, *auto, err, defaults)
		}
	}

	fs := newGroupedFlags("baseline", io.Discard)
	solverFlags(fs, "baseline")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if !reflect.DeepEqual(names, []string{"k", "seed"}) {
		t.Errorf("baseline's solver flags %v, want k and seed", names)
	}
}
