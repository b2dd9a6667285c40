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
	input := fs.String("input", "", "input Parquet: file, directory, glob or comma list (required)")
	output := fs.String("output", "", "release Parquet file, published atomically (required; must not exist unless --overwrite)")
	overwrite := fs.Bool("overwrite", false, "replace the release (and report) already at --output; a file that is not a release is never replaced")
	metricsOut := fs.String("metrics_out", "", "write the run report (JSON) here at the end of the run, published or not; - for stdout")
	quiet := fs.Bool("quiet", false, "no summary on stderr")
	dedupe := dedupeFlag(fs.FlagSet, "repeated user ids in the input: refuse or union")
	timeout := connectTimeoutFlag(fs.FlagSet)
	fs.in(groupPrivacy)
	method := choiceFlag(fs.FlagSet, "method", "mondrian", baseline.ParseMethod,
		"mondrian (k-anonymity by suppression; needs --k), rr_edge or rr_node (randomized response at epsilon-edge or epsilon-node differential privacy; needs --epsilon)")
	epsilon := fs.Float64("epsilon", 0, "rr_*: privacy parameter (positive)")
	sp, _ := solverFlags(fs, "baseline") // --k in Privacy, --seed in Randomized response
	k, seed := &sp.K, &sp.Seed
	maxEntries := fs.Int64("max_entries", baseline.DefaultMaxEntries, "rr_*: refuse a release expected to hold more entries than this (0 = the default)")
	fs.in(groupPrivacy)
	ids := addUserIDFlags(fs.FlagSet, true)
	if err := parseFlags(fs.FlagSet, args); err != nil {
		return err
	}
	mondrian := *method == baseline.MethodMondrian
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *input == "":
		return usageErr("missing --input")
	case *output == "":
		return usageErr("missing --output")
	case mondrian && *k < minK:
		return checkK(*k)
	case !mondrian && set["k"]:
		return usageErr("--k is for --method mondrian, not %s", *method)
	case mondrian && (set["epsilon"] || set["seed"] || set["max_entries"]):
		return usageErr("--epsilon, --seed and --max_entries are for the rr methods, not mondrian")
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
	setStoreTimeout(*timeout)
	key, err := ids.resolve()
	if err != nil {
		return err
	}
	files, err := matrix.ListFiles(*input)
	if err != nil {
		return inputErr(err)
	}
	plan := release.Plan{InputSpec: *input, InputFiles: files, Output: *output, Overwrite: *overwrite,
		Report: *metricsOut, Stdout: stdout, KeyOut: *ids.out}
	warnUserIDs(stderr, "baseline", *ids.mode, ids.source(), derefKey(key))
	start := time.Now()
	var info *smoothanonpb.BaselineInfo
	r, err := singleFile(plan, stderr, func(ctx context.Context) (release.Outcome, error) {
		o := release.Outcome{Key: key}
		in, _, err := matrix.ReadMatrix(*input, matrix.ReadOptions{Dedupe: *dedupe})
		if err != nil {
			return o, inputErr(err)
		}
		if in, err = pseudonymize(in, key); err != nil {
			return o, inputErr(fmt.Errorf("%s: %w", *input, err))
		}
		var res *baseline.Result
		if mondrian {
			if err := baseline.CheckMondrianParams(baseline.MondrianParams{K: *k}, in.NumRows()); err != nil {
				return o, inputErr(fmt.Errorf("%s: %w", *input, err))
			}
			if res, err = baseline.Mondrian(ctx, in, baseline.MondrianParams{K: *k}); err != nil {
				return o, inputErr(err)
			}
			o.Report, err = verify.Check(in, res.Release, verify.Params{K: *k, Mode: matrix.NonSmooth})
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
		return o, nil
	})
	problems(stderr, "baseline", r)
	if err != nil {
		return exitFor(err, 2)
	}
	if r == nil {
		return nil // an earlier run's release, whose pending key was saved
	}
	if !*quiet {
		what := fmt.Sprintf("k=%d: %d partitions", *k, info.GetPartitions())
		if !mondrian {
			what = fmt.Sprintf("epsilon=%g (p=%.4g over %d columns)", *epsilon, info.GetFlipProbability(), info.GetColumns())
		}
		fmt.Fprintf(stderr, "smoothanon baseline: %s %s, %d rows, jaccard %.4f, suppressed %.4f, created %.4f, %.1fs -> %s\n",
			*method, what, r.Rows, r.Jaccard, r.SuppressedFraction, r.CreatedFraction, since(start), *output)
	}
	return nil
}
