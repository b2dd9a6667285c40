package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/transforms"
)

func init() {
	register(command{
		name:  "run",
		short: "anonymize a large input with the Beam pipeline (prism, Flink, Dataflow)",
		run:   runRun,
	})
}

// addGlobalFlags adds to fs every flag Beam and its runners registered on
// the global flag set (--runner, --endpoint, --environment_type, --project,
// --region, --staging_location, --worker_binary, --dry_run, ...), so they
// parse in one pass and land in Beam's own variables.
func addGlobalFlags(fs *flag.FlagSet) {
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name) == nil {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
}

func runRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	input := fs.String("input", "", "input Parquet: file, directory, glob or comma list; local or gs://, s3:// (required)")
	output := fs.String("output", "", "release directory of sharded Parquet files, local or gs://, s3:// (required; must not exist or be empty)")
	overwrite := fs.Bool("overwrite", false, "replace a non-empty --output or another run's release")
	runID := fs.String("run_id", "", "id of this run, written into the release's _SUCCESS manifest; rerunning an id already published there does nothing (default: --date if given, else random)")
	date := dateFlag(fs)
	k := fs.Int("k", 0, "smallest class size (required, at least 2)")
	mode := modeFlag(fs)
	chunkSize := fs.Int64("chunk_size", pipeline.DefaultChunkSize, "target rows per chunk solved together (at least 2k)")
	seed := fs.Int64("seed", 0, "random seed; same input, seed and chunk size give the same release on every runner")
	shards := fs.Int64("shards", 0, "output files (0 = one per ~1M rows)")
	chunkKey := chunkKeyFlag(fs)
	iterations := fs.Int("spectral_iterations", transforms.DefaultSpectralIterations, "averaging rounds of --chunk_key=spectral")
	variant := variantFlag(fs)
	search := searchFlag(fs)
	start := runStartFlag(fs)
	poolShare := fs.Float64("pool_share", pipeline.DefaultPoolShare, "share of each chunk's rows, its worst-served clusters, solved again together with its neighbours' (0 = no pools; else 0.01..0.5)")
	beta := fs.Int("beta", solver.DefaultBeta, "solver beta")
	restarts := fs.Int("restarts", solver.DefaultRestarts, "solver restarts per chunk")
	workers := fs.Int("workers", 0, "solver goroutines per chunk (0 = GOMAXPROCS, or 1 under --start mondrian: chunks then solve side by side); does not change the release")
	metricsOut := fs.String("metrics_out", "", "write the run report with Beam metrics (JSON) here; - for stdout")
	ids := addUserIDFlags(fs, true)
	addGlobalFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkK(*k); err != nil {
		return err
	}
	day, err := resolveDate(*date, time.Now())
	if err != nil {
		return err
	}
	if err := expandDates(day, map[string]*string{"input": input, "output": output, "metrics_out": metricsOut, "pseudonym_key_out": ids.out}); err != nil {
		return err
	}
	if *runID == "" {
		*runID = day
	}
	if *iterations < 1 {
		return usageErr("--spectral_iterations=%d, want at least 1", *iterations)
	}
	p := pipeline.Params{Input: *input, Output: *output, Overwrite: *overwrite, RunID: *runID, K: *k, Mode: *mode,
		ChunkSize: *chunkSize, Seed: *seed, Shards: *shards, Variant: *variant, Search: *search, Beta: *beta, Restarts: *restarts,
		Start: start.start, AutoStart: start.auto, Workers: *workers, Runner: runnerName(*runners.Runner), Key: *chunkKey,
		SpectralIterations: *iterations, PoolShare: *poolShare}
	if err := pipeline.CheckParams(p); err != nil {
		return usageErr("%v", err)
	}
	ctx := context.Background()
	dry := fs.Lookup("dry_run") != nil && fs.Lookup("dry_run").Value.String() == "true"
	// A rerun of a published run id (a nightly date run again) does
	// nothing: it is decided before a key is loaded, drawn or saved, so
	// the night keeps its one release and its one key.
	if m, merr := storage.ReadManifest(ctx, p.Output); !dry && merr == nil && p.RunID != "" && m.RunID == p.RunID {
		fmt.Fprintf(stderr, "smoothanon run: %s already holds the release of run %s; nothing to do\n", p.Output, p.RunID)
		return nil
	}
	key, pseudo, err := ids.resolve()
	if err != nil {
		return err
	}
	if pseudo {
		p.PseudonymKey = &key
	}
	if dry {
		// A printed or logged job graph (Dataflow logs it) must not carry
		// the key; nothing runs, so nothing is saved either.
		if pseudo {
			p.PseudonymKey = &pseudonym.Placeholder
		}
		if p.Runner != "dataflow" {
			return runErr(pipeline.DryRun(ctx, p, stdout))
		}
		_, err := pipeline.Run(ctx, p)
		return runErr(err)
	}
	// The drawn key is saved before the job publishes, and removed again
	// when the output holds no release of this run. On any other error
	// reading the output the key is kept: it may belong to a published
	// release.
	undo, err := ids.saveKey(key, pseudo)
	if err != nil {
		return err
	}
	res, err := pipeline.Run(ctx, p)
	if err != nil {
		m, merr := storage.ReadManifest(ctx, p.Output)
		if errors.Is(merr, storage.ErrNotRelease) || merr == nil && m.RunID != p.RunID {
			undo()
		}
	}
	if err == nil && res.AlreadyPublished {
		undo() // a key drawn now belongs to no release
		fmt.Fprintf(stderr, "smoothanon run: %s already holds the release of run %s; nothing to do\n", p.Output, res.RunID)
		return nil
	}
	if res != nil && res.Report != nil {
		annotate(res.Report, *ids.mode)
		res.Report.Date = day
		if werr := writeReport(*metricsOut, res.Report, stdout); werr != nil && err == nil {
			err = werr
		}
		r := res.Report
		fmt.Fprintf(stderr, "smoothanon run: %d rows in %d chunks on %s, %.1fs: valid=%v J=%.4f classes=%d suppressed=%d created=%d\n",
			r.Rows, r.GetPipeline().GetChunks(), r.GetPipeline().GetRunner(), r.GetPipeline().GetSeconds(),
			r.Valid, r.Jaccard, r.Classes, r.Suppressed, r.Created)
	}
	return runErr(err)
}

// runnerAliases are the other names Beam registers for the runners the
// pipeline supports (Dataflow's Flex Template launcher may pass
// --runner=DataflowRunner).
var runnerAliases = map[string]string{
	"DataflowRunner": "dataflow", "FlinkRunner": "flink", "PrismRunner": "prism",
	"PortableRunner": "universal", "portable": "universal",
}

// runnerName maps a Beam runner alias to the pipeline's name for it.
func runnerName(r string) string {
	if n, ok := runnerAliases[r]; ok {
		return n
	}
	return r
}

// runErr maps pipeline errors to exit codes: 2 input, 1 verification,
// 3 anything else (the runner failed).
func runErr(err error) error {
	var ie *pipeline.InputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		return inputErr(err)
	case errors.Is(err, pipeline.ErrVerification):
		return &exitError{code: 1, err: err}
	}
	return &exitError{code: 3, err: err}
}
