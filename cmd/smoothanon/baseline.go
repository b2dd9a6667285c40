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
	"github.com/smoothanon/smoothanon/storage"
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
	fs := newFlagSet("baseline", stderr)
	method := choiceFlag(fs, "method", "mondrian", baseline.ParseMethod,
		"mondrian (k-anonymity by suppression; needs --k), rr_edge or rr_node (randomized response at epsilon-edge or epsilon-node differential privacy; needs --epsilon)")
	input := fs.String("input", "", "input Parquet: file, directory, glob or comma list (required)")
	output := fs.String("output", "", "release Parquet file, written atomically (required)")
	k := fs.Int("k", 0, "mondrian: smallest partition size (at least 2)")
	epsilon := fs.Float64("epsilon", 0, "rr_*: privacy parameter (positive)")
	seed := fs.Int64("seed", 0, "rr_*: random seed; same input and seed give the same release")
	maxEntries := fs.Int64("max_entries", baseline.DefaultMaxEntries, "rr_*: refuse a release expected to hold more entries than this (0 = the default)")
	metricsOut := fs.String("metrics_out", "", "write the run report (JSON) to this file atomically; - for stdout")
	quiet := fs.Bool("quiet", false, "no summary on stderr")
	dedupe := dedupeFlag(fs, "repeated user ids in the input: refuse or union")
	if err := parseFlags(fs, args); err != nil {
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
	if files, err := matrix.ListFiles(*input); err == nil {
		for _, f := range files {
			if storage.Clean(f) == storage.Clean(*output) {
				return usageErr("--output %s is an input file", *output)
			}
		}
	}

	start := time.Now()
	in, _, err := matrix.ReadMatrix(*input, matrix.ReadOptions{Dedupe: *dedupe})
	if err != nil {
		return inputErr(err)
	}
	var res *baseline.Result
	var r *smoothanonpb.RunReport
	if mondrian {
		if err := baseline.CheckMondrianParams(baseline.MondrianParams{K: *k}, in.NumRows()); err != nil {
			return inputErr(fmt.Errorf("%s: %w", *input, err))
		}
		if res, err = baseline.Mondrian(context.Background(), in, baseline.MondrianParams{K: *k}); err != nil {
			return inputErr(err)
		}
		r, err = verify.Check(in, res.Release, verify.Params{K: *k, Mode: matrix.NonSmooth})
	} else {
		if res, err = baseline.RandomizedResponse(context.Background(), in, rr); err != nil {
			return inputErr(err)
		}
		r, err = verify.Measure(in, res.Release)
	}
	if err != nil {
		return err
	}
	r.Baseline = res.Info
	if err := writeRelease("baseline", res.Release, nil, r, *output, *metricsOut, stdout, stderr); err != nil {
		return err
	}
	if !*quiet {
		what := fmt.Sprintf("k=%d: %d partitions", *k, res.Info.Partitions)
		if !mondrian {
			what = fmt.Sprintf("epsilon=%g (p=%.4g over %d columns)", *epsilon, res.Info.FlipProbability, res.Info.Columns)
		}
		fmt.Fprintf(stderr, "smoothanon baseline: %s %s, %d rows, jaccard %.4f, suppressed %.4f, created %.4f, %.1fs -> %s\n",
			*method, what, r.Rows, r.Jaccard, r.SuppressedFraction, r.CreatedFraction, time.Since(start).Seconds(), *output)
	}
	return nil
}
