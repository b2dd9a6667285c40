package main

import (
	"fmt"
	"strconv"

	"github.com/smoothanon/smoothanon/release"
)

// exitGate is the exit code of a valid release that missed its quality
// gate (--min_jaccard and the others): nothing was published.
const exitGate = 5

// groupGate holds the quality gate's flags in -h.
const groupGate = "Quality gate (checked after verification, before publishing)"

// gateFlags are the quality gate's flags, the same for run, solve and
// baseline; gate() is their release.Gate.
type gateFlags struct {
	minJaccard, maxSuppressed, maxCreated, maxDrift optFloat
	previous                                        *string
}

// addGateFlags defines the gate's flags in their own group.
func addGateFlags(fs *groupedFlags) *gateFlags {
	fs.in(groupGate)
	g := &gateFlags{}
	fs.Var(&g.minJaccard, "min_jaccard", "publish only if the release's Jaccard is at least this `fraction` (0..1)")
	fs.Var(&g.maxSuppressed, "max_suppressed", "publish only if at most this `fraction` of the input's entries is suppressed")
	fs.Var(&g.maxCreated, "max_created", "publish only if at most this `fraction` of the input's entries is created")
	fs.Var(&g.maxDrift, "max_drift", "publish only if Jaccard, suppressed and created each moved at most this `fraction` (0..1) since --previous_report")
	g.previous = fs.String("previous_report", "", "the previous run's report, e.g. the night before's --metrics_out (run: {date-1} allowed): the report's drift section says what moved since, and --max_drift is checked against it; missing: drift not checked, and said so")
	return g
}

// gate is the flags' release.Gate, checked.
func (g *gateFlags) gate() (release.Gate, error) {
	gate := release.Gate{MinJaccard: g.minJaccard.v, MaxSuppressed: g.maxSuppressed.v, MaxCreated: g.maxCreated.v,
		MaxDrift: g.maxDrift.v, Previous: *g.previous}
	if err := gate.Check(); err != nil {
		return gate, usageErr("%v", err)
	}
	return gate, nil
}

// optFloat is a float flag that knows whether it was given (v nil when
// not): 0 is a threshold like any other.
type optFloat struct{ v *float64 }

func (o *optFloat) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a number")
	}
	o.v = &v
	return nil
}
