package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/smoothanon/smoothanon/baseline"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

func init() {
	register(command{
		name:  "baseline",
		short: "release an input with one of the paper's baselines (Mondrian, randomized response)",
		run:   runBaseline,
	})
}

func runBaseline(args []string, stdout, stderr io.Writer) error {
	fs := newGroupedFlags("baseline", stderr)
	fs.in(groupIO)
	f := addFileFlags(fs, "no summary on stderr")
	fs.in(groupPrivacy)
	method := choiceFlag(fs.FlagSet, "method", "mondrian", baseline.ParseMethod,
		"mondrian (k-anonymity by suppression; needs --k), rr_edge or rr_node (randomized response at epsilon-edge or epsilon-node differential privacy; needs --epsilon)")
	epsilon := fs.Float64("epsilon", 0, "rr_*: privacy parameter (positive)")
	sp, _ := solverFlags(fs, "baseline") // --k in Privacy, --seed in Randomized response
	k, seed := &sp.K, &sp.Seed
	maxEntries := fs.Int64("max_entries", baseline.DefaultMaxEntries, "rr_*: refuse a release expected to hold more entries than this (0 = the default)")
	fs.in(groupPrivacy)
	sens := addSensitiveFlags(fs.FlagSet, sp)
	f.addIDFlags(fs)
	f.gate = addGateFlags(fs)
	if err := parseFlags(fs.FlagSet, args); err != nil {
		return err
	}
	mondrian := *method == baseline.MethodMondrian
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := f.missing(); err != nil {
		return err
	}
	switch {
	case mondrian && *k < minK:
		return checkK(*k)
	case !mondrian && set["k"]:
		return usageErr("--k is for --method mondrian, not %s", *method)
	case mondrian && (set["epsilon"] || set["seed"] || set["max_entries"]):
		return usageErr("--epsilon, --seed and --max_entries are for the rr methods, not mondrian")
	case !mondrian && (set["sensitive"] || set["sensitive_k"] || set["sensitive_policy"]):
		return usageErr("--sensitive is for --method mondrian: randomized response creates entries of every feature")
	case sp.SensitiveK != 0 && sp.SensitiveK < *k:
		return usageErr("sensitive_k = %d is smaller than k = %d", sp.SensitiveK, *k)
	}
	setStoreTimeout(*f.timeout) // the list may be in a bucket
	if _, err := sens.load(context.Background()); err != nil {
		return err
	}
	level := baseline.Edge
	if *method == baseline.MethodRRNode {
		level = baseline.Node
	}
	rr := baseline.RRParams{Epsilon: *epsilon, Level: level, Seed: *seed, MaxEntries: *maxEntries}
	if !mondrian {
		if err := baseline.CheckRRParams(rr); err != nil {
			return usageErr("%v", err)
		}
	}
	start := time.Now()
	var info *smoothanonpb.BaselineInfo
	r, err := f.release("baseline", stdout, stderr, func(ctx context.Context, in *matrix.Matrix) (o release.Outcome, err error) {
		var res *baseline.Result
		if mondrian {
			if err := baseline.CheckMondrianParams(baseline.MondrianParams{K: *k}, in.NumRows()); err != nil {
				return o, inputErr(fmt.Errorf("%s: %w", *f.input, err))
			}
			if res, err = baseline.Mondrian(ctx, in, baseline.MondrianParams{K: *k}); err != nil {
				return o, inputErr(err)
			}
			if err := sens.resolve(f.vocab); err != nil {
				return o, err
			}
			if len(sp.Sensitive) > 0 { // partitions share every feature they show: only sensitive_k (or drop) can bite
				res.Release = solver.SuppressSensitive(in, res.Release, res.Partition, *sp)
			}
			vp := verify.Params{K: *k, Mode: matrix.NonSmooth}
			sens.verifyParams(&vp)
			o.Report, err = verify.Check(in, res.Release, vp)
			o.Sensitive = sens.record()
		} else {
			if res, err = baseline.RandomizedResponse(ctx, in, rr); err != nil {
				return o, inputErr(err)
			}
			o.Report, err = verify.Measure(in, res.Release)
		}
		if err != nil {
			return o, err
		}
		o.Report.Baseline, info = res.Info, res.Info
		o.Release = res.Release
		return o, accountFeatures(&o, in, res.Release, *f.featureReport != "", f.vocab, sens)
	})
	if err != nil || r == nil {
		return err // nil r: an earlier run's release, whose pending key was saved
	}
	if !*f.quiet {
		what := fmt.Sprintf("k=%d: %d partitions", *k, info.GetPartitions())
		if !mondrian {
			what = fmt.Sprintf("epsilon=%g (p=%.4g over %d columns)", *epsilon, info.GetFlipProbability(), info.GetColumns())
		}
		fmt.Fprintf(stderr, "smoothanon baseline: %s %s, %d rows, jaccard %.4f, suppressed %.4f, created %.4f, %.1fs -> %s\n",
			*method, what, r.Rows, r.Jaccard, r.SuppressedFraction, r.CreatedFraction, since(start), *f.output)
	}
	return nil
}
