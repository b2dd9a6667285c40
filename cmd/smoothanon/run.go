package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/transforms"
)

func init() {
	register(command{
		name:  "run",
		short: "anonymize a large input with the Beam pipeline (prism, Flink, Dataflow)",
		run:   runRun,
	})
}

// runnerFlag adds Beam's --runner to fs, with our usage: it is the one
// Beam flag every run sets.
func runnerFlag(fs *flag.FlagSet) {
	f := flag.CommandLine.Lookup("runner")
	resetFlag(f)
	fs.Var(f.Value, f.Name, "Beam runner: prism (the default; Beam's portable runner, in this process), direct (runs prism: Beam's Go direct runner is deprecated, prism replaces it), flink or universal (a job service at --endpoint), dataflow (Google Cloud Dataflow: --project, --region, ...)")
}

// addGlobalFlags adds to fs every flag Beam and its runners registered on
// the global flag set (--runner, --endpoint, --environment_type, --project,
// --region, --staging_location, --worker_binary, --dry_run, ...), so they
// parse in one pass and land in Beam's own variables.
// Each run starts from the flags' defaults: a second run in one process
// (tests, a library caller) does not inherit the first one's runner or
// endpoint.
func addGlobalFlags(fs *flag.FlagSet) {
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name) == nil {
			resetFlag(f)
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
}

func runRun(args []string, stdout, stderr io.Writer) error {
	fs := newGroupedFlags("run", stderr)
	fs.in(groupIO)
	input := fs.String("input", "", "input Parquet: file, directory, glob or comma list; local or gs://, s3:// (required)")
	layout := layoutFlags(fs.FlagSet)
	output := fs.String("output", "", "release directory of sharded Parquet files, local or gs://, s3:// (required; empty or missing, or holding a release with --overwrite)")
	outputShape := outputShapeFlag(fs.FlagSet)
	overwrite := fs.Bool("overwrite", false, "replace the release (and report) already at --output; nothing else there is ever replaced or deleted")
	runID := fs.String("run_id", "", "id of this run (A-Z a-z 0-9 . _ -), written into the release's _SUCCESS manifest; rerunning an id already published there does nothing (default: --date if given, else random)")
	date := dateFlag(fs.FlagSet)
	metricsOut := fs.String("metrics_out", "", "write the run report (JSON) here at the end of the run, published or not; - for stdout")
	featureReport := featureReportFlag(fs.FlagSet)
	sp, autoStart := solverFlags(fs, "run")
	fs.in(groupPrivacy)
	sens := addSensitiveFlags(fs.FlagSet, sp)
	ids := addUserIDFlags(fs.FlagSet, true)
	fs.in(groupPipeline)
	runnerFlag(fs.FlagSet)
	chunkSize := fs.Int64("chunk_size", pipeline.DefaultChunkSize, "target rows per chunk solved together (at least 2k)")
	chunkKey := chunkKeyFlag(fs.FlagSet)
	iterations := fs.Int("spectral_iterations", transforms.DefaultSpectralIterations, "averaging rounds of --chunk_key=spectral")
	poolShare := fs.Float64("pool_share", pipeline.DefaultPoolShare, "share of each chunk's rows, its worst-served clusters, solved again together with its neighbours' (0 = no pools; else 0.01..0.5)")
	shards := fs.Int64("shards", 0, "output files (0 = one per ~1M rows)")
	timeout := connectTimeoutFlag(fs.FlagSet)
	gf := addGateFlags(fs)
	fs.in(groupBeam)
	addGlobalFlags(fs.FlagSet)
	if err := parseFlags(fs.FlagSet, args); err != nil {
		return err
	}
	if err := checkK(sp.K); err != nil {
		return err
	}
	day, err := resolveDate(*date, time.Now())
	if err != nil {
		return err
	}
	if err := expandDates(day, map[string]*string{"input": input, "output": output, "metrics_out": metricsOut, "feature_report": featureReport, "pseudonym_key_out": ids.out, "previous_report": gf.previous}); err != nil {
		return err
	}
	gate, err := gf.gate()
	if err != nil {
		return err
	}
	if *runID == "" {
		*runID = day
	}
	if *runID != "" {
		if err := release.CheckRunID(*runID); err != nil {
			return usageErr("--run_id: %v", err)
		}
	}
	if *iterations < 1 {
		return usageErr("--spectral_iterations=%d, want at least 1", *iterations)
	}
	setStoreTimeout(*timeout) // the list may be in a bucket
	// Ids or names: the pipeline readies the list for its input.
	list, err := sens.load(context.Background())
	if err != nil {
		return err
	}
	if async := fs.Lookup("async"); async != nil && async.Value.String() == "true" {
		return usageErr("--async: run waits for its job, then publishes, saves the key and writes the report; it cannot return at submission")
	}
	p := pipeline.Params{Input: *input, Layout: *layout, Output: *output, OutputShape: *outputShape, Overwrite: *overwrite, RunID: *runID, Solver: *sp,
		ChunkSize: *chunkSize, Shards: *shards, AutoStart: *autoStart, Runner: runnerName(*runners.Runner), Key: *chunkKey,
		SpectralIterations: *iterations, PoolShare: *poolShare, ConnectTimeout: *timeout,
		Report: *metricsOut, Stdout: stdout, KeyOut: *ids.out, Date: day, Gate: gate, FeatureTable: *featureReport, Stderr: stderr}
	p.Sensitive = list
	if err := pipeline.CheckParams(p); err != nil {
		return usageErr("%v", err)
	}
	ctx := context.Background()
	setStoreTimeout(*timeout)
	key, err := ids.resolve()
	if err != nil {
		return err
	}
	p.PseudonymKey = key
	dry := fs.Lookup("dry_run") != nil && fs.Lookup("dry_run").Value.String() == "true"
	if dry {
		// A printed or logged job graph (Dataflow logs it) must not carry
		// the key; nothing runs, so nothing is saved either.
		if key != nil {
			p.PseudonymKey = &pseudonym.Placeholder
		}
		if p.Runner != "dataflow" {
			return runErr(pipeline.DryRun(ctx, p, stdout))
		}
		_, err := pipeline.Run(ctx, p)
		return runErr(err)
	}
	warnUserIDs(stderr, "run", *ids.mode, ids.source(), derefKey(key))
	res, err := pipeline.Run(ctx, p)
	if err == nil && res.AlreadyPublished {
		fmt.Fprintf(stderr, "smoothanon run: %s already holds the release of run %s; nothing to do\n", p.Output, res.RunID)
		return nil
	}
	if res != nil && res.Report.GetPipeline() != nil && (err == nil || errors.Is(err, release.ErrVerification) || errors.As(err, new(*release.GateError))) {
		r := res.Report
		problems(stderr, "run", r)
		sens.noteUnmatched(r.GetSensitive().GetUnmatched(), r.GetSensitive().GetFeatures())
		fmt.Fprintf(stderr, "smoothanon run: %d rows in %d chunks on %s, %.1fs: valid=%v published=%v J=%.4f classes=%d suppressed=%d created=%d\n",
			r.Rows, r.GetPipeline().GetChunks(), r.GetPipeline().GetRunner(), r.GetPipeline().GetSeconds(),
			r.Valid, r.Published, r.Jaccard, r.Classes, r.Suppressed, r.Created)
	}
	return runErr(err)
}

// connectTimeoutFlag is --connect_timeout: how long an object store or a
// job endpoint may take to answer.
func connectTimeoutFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("connect_timeout", pipeline.DefaultConnectTimeout,
		"how long an object store or job endpoint may take to answer before the command fails (one line naming it)")
}

func derefKey(k *pseudonym.Key) pseudonym.Key {
	if k == nil {
		return pseudonym.Key{}
	}
	return *k
}

// resetFlag sets a flag of a plain type back to its default; flags of
// other types (lists that Set appends to) are left as they are.
func resetFlag(f *flag.Flag) {
	g, ok := f.Value.(flag.Getter)
	if !ok || strings.HasPrefix(f.Name, "test.") { // the testing package's own
		return
	}
	switch g.Get().(type) {
	case string, bool, int, int64, uint, uint64, float64, time.Duration:
		f.Value.Set(f.DefValue)
	}
}

// runnerAliases are the other names Beam registers for the runners the
// pipeline supports (Dataflow's Flex Template launcher may pass
// --runner=DataflowRunner).
var runnerAliases = map[string]string{
	"DataflowRunner": "dataflow", "FlinkRunner": "flink", "PrismRunner": "prism", "DirectRunner": "direct",
	"PortableRunner": "universal", "portable": "universal",
}

// runnerName maps a Beam runner alias to the pipeline's name for it.
func runnerName(r string) string {
	if n, ok := runnerAliases[r]; ok {
		return n
	}
	return r
}

// runErr maps pipeline errors to exit codes (exitFor): anything of no
// known class is the runner's, 3.
func runErr(err error) error { return exitFor(err, 3) }
