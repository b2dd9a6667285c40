package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/smoothanon/smoothanon/assess"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/transforms"
)

func init() {
	register(command{
		name:  "assess",
		short: "before a run: how exposed the input's users are, and the price of each k (from a bounded sample)",
		run:   runAssess,
	})
}

// assessSlots is the number of places of the input the sample is read
// from (transforms.SampleRows); assessRead how many times --sample_rows
// rows are read there, to keep --sample_rows evenly spaced among them.
const (
	assessSlots = 64
	assessRead  = 4
)

func runAssess(args []string, stdout, stderr io.Writer) error {
	fs := newGroupedFlags("assess", stderr)
	fs.in(groupIO)
	input := fs.String("input", "", "input Parquet, as run reads it: file, directory, glob or comma list; local or gs://, s3:// (required)")
	layout := layoutFlags(fs.FlagSet)
	report := fs.String("report", "", "write the assessment (JSON) here, local or gs://, s3://; - for stdout. It describes the private input: keep it with the input")
	plotPath := fs.String("plot", "", "also draw the predicted Jaccard vs k of each mode, with its interval, as a PNG here (a .png name), local or gs://, s3://")
	sampleRows := fs.Int("sample_rows", 200_000, "rows the price is computed from, evenly spaced among 4 times as many read from 64 places of the input's files and row groups (the risk is of all rows read); the cost does not grow past it (at least 1000)")
	fs.in(groupPrivacy)
	ksFlag := fs.String("k", "2,4,8,16,32", "comma list of the k to price and to count the users below")
	modesFlag := fs.String("mode", "smooth,nonsmooth", "comma list of the modes to price: smooth, nonsmooth")
	sp, autoStart := solverFlags(fs, "assess")
	fs.in(groupPrivacy)
	sens := addSensitiveFlags(fs.FlagSet, sp) // the prices are of releases under the rule
	fs.in(groupPipeline)
	chunkSize := fs.Int64("chunk_size", pipeline.DefaultChunkSize, "the run's --chunk_size")
	chunkKey := chunkKeyFlag(fs.FlagSet)
	iterations := fs.Int("spectral_iterations", transforms.DefaultSpectralIterations, "the run's --spectral_iterations")
	poolShare := fs.Float64("pool_share", pipeline.DefaultPoolShare, "the run's --pool_share (0 = no pools; else 0.01..0.5)")
	exact := fs.Bool("exact", false, "count the risk over every row with a job on --runner (exact figures, not bounds from the rows read); the price still comes from the sample")
	scratch := fs.String("scratch", "", "with --exact: a directory, local or gs://, s3://, every worker can reach, where the job writes its result (removed after); default --report's directory, else the local temp directory")
	runnerFlag(fs.FlagSet)
	timeout := connectTimeoutFlag(fs.FlagSet)
	fs.in(groupBeam)
	addGlobalFlags(fs.FlagSet)
	if err := parseFlags(fs.FlagSet, args); err != nil {
		return err
	}
	if *input == "" {
		return usageErr("missing --input")
	}
	ks, err := parseKs(*ksFlag)
	if err != nil {
		return err
	}
	modes, err := parseModes(*modesFlag)
	if err != nil {
		return err
	}
	if !*exact {
		for _, name := range []string{"scratch", "runner", "endpoint"} {
			if flagSet(fs.FlagSet, name) {
				return usageErr("--%s is for --exact's job: give --exact, or leave --%s out", name, name)
			}
		}
	} else if err := pipeline.CheckRunner(runnerName(*runners.Runner), ""); err != nil {
		return usageErr("%v", err)
	}
	if sp.SensitiveK != 0 && sp.SensitiveK < slices.Max(ks) {
		return usageErr("--sensitive_k=%d is smaller than k = %d (leave it out to price each k with sensitive_k = k)", sp.SensitiveK, slices.Max(ks))
	}
	setStoreTimeout(*timeout) // the list may be in a bucket
	if _, err := sens.load(context.Background()); err != nil {
		return err
	}
	if *sampleRows < 1000 {
		return usageErr("--sample_rows=%d, want at least 1000", *sampleRows)
	}
	if *chunkSize < 2*int64(slices.Max(ks)) {
		return usageErr("--chunk_size=%d, want at least 2k = %d", *chunkSize, 2*slices.Max(ks))
	}
	if err := transforms.CheckPoolShare(*poolShare); err != nil {
		return usageErr("--pool_share: %v", err)
	}
	// A signal at any point stops the job and the pricing: exit 130 or
	// 143, no report, the job's scratch removed.
	ctx, stop := interruptible()
	defer stop()
	start := time.Now()
	in, err := pipeline.Inspect(*input, *layout)
	if err != nil {
		return inputErr(err)
	}
	if err := checkAssessOutputs(*report, *plotPath, in.Files); err != nil {
		return err
	}
	p := pipeline.Params{Input: *input, Layout: in.Layout, Solver: *sp, AutoStart: *autoStart, Key: *chunkKey}
	if err := pipeline.ResolveAuto(&p, in); err != nil {
		return inputErr(err)
	}
	files := slices.Sorted(slices.Values(in.Files))
	read, vocab, err := transforms.SampleRows(files, in.Layout, assessRead**sampleRows, assessSlots)
	if err != nil {
		return inputErr(err)
	}
	if vocab != nil {
		if vocab, err = rankNames(read, vocab); err != nil {
			return err
		}
	}
	if err := sens.resolve(vocab); err != nil {
		return err
	}
	p.Solver.Sensitive = sp.Sensitive
	// Rows near each other in a file are often alike (ids given in
	// crawl, signup or region order): of the rows read, every
	// len(read)/sample-th is priced, so the sample spreads further.
	rows := read
	if len(read) > *sampleRows {
		rows = make([][]uint32, *sampleRows)
		for i := range rows {
			rows[i] = read[i*len(read)/len(rows)]
		}
	}
	if len(rows) < 2*slices.Max(ks)*assess.DefaultReplicates {
		return inputErr(fmt.Errorf("%s: the sample holds %d non-empty rows, too few to price k = %d (want %d)", *input, len(rows), slices.Max(ks), 2*slices.Max(ks)*assess.DefaultReplicates))
	}
	sample := readMatrix(rows)
	var entries int64
	for _, r := range read {
		entries += int64(len(r))
	}
	rep := &smoothanonpb.Assessment{Input: *input, InputRows: in.Rows, Users: in.Rows, Shape: in.Layout.Shape.String(),
		ReadRows: int64(len(read)), SampleRows: int64(len(rows)), ChunkKey: p.Key.String(), Start: p.Solver.Start.String(), ChunkSize: *chunkSize}
	if in.Layout.Shape == matrix.ShapeLong {
		// Pairs per user from the sample: its rows are runs of one user's
		// consecutive pairs, whole users where the export groups them.
		rep.Users, rep.UsersEstimated = max(int64(len(read)), in.Rows*int64(len(read))/max(1, entries)), true
	}
	rep.WholeInput = !rep.UsersEstimated && int64(len(read)) == in.Rows
	risk := assess.RiskOf(readMatrix(read), ks)
	if vocab != nil {
		for i, f := range risk.Exposing {
			risk.Exposing[i] = assess.FeatureCount{Rows: f.Rows, Name: vocab.Name(f.Feature)}
		}
	}
	rep.Risk = risk.Proto()
	if *exact {
		setStoreTimeout(*timeout)
		r, err := pipeline.Risk(ctx, pipeline.RiskParams{Input: *input, Layout: in.Layout, Ks: ks,
			Scratch: scratchDir(*scratch, *report), Runner: runnerName(*runners.Runner), ConnectTimeout: *timeout}, in)
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		if err != nil {
			return runErr(err)
		}
		rep.Risk, rep.RiskExact, rep.RiskSeconds = assess.FromCounts(r.RiskCounts, ks, r.Names).Proto(), true, r.Seconds
	}
	price, err := assess.Price(ctx, sample, ks, modes, assess.PriceParams{
		Rows: max(rep.Users, int64(len(rows))), ChunkSize: *chunkSize, Solver: p.Solver, PoolShare: *poolShare,
		Order: transforms.SignatureParams{Seed: p.Solver.Seed, Key: p.Key, Iterations: *iterations}})
	if ctx.Err() != nil {
		return runErr(context.Cause(ctx))
	}
	if err != nil {
		return inputErr(err)
	}
	for _, pt := range price {
		rep.Price = append(rep.Price, pt.Proto())
	}
	rep.Seconds = time.Since(start).Seconds()
	printAssess(stdout, rep)
	written, err := writeAssess(rep, *plotPath, *report, stdout)
	if ctx.Err() != nil {
		// The signal came while the outputs were written: none stays.
		for _, path := range written {
			storage.RemoveAll(context.WithoutCancel(ctx), path)
		}
		return runErr(context.Cause(ctx))
	}
	return err
}

// writeAssess writes rep's plot to plotPath and rep to report (- for
// stdout), each when given, and returns the files it wrote.
func writeAssess(rep *smoothanonpb.Assessment, plotPath, report string, stdout io.Writer) (written []string, err error) {
	if plotPath != "" {
		png, err := plotPrice(rep)
		if err != nil {
			return written, err
		}
		if err := writeFileAtomic(plotPath, png); err != nil {
			return written, usageErr("--plot %s: %v", plotPath, err)
		}
		written = append(written, plotPath)
	}
	if report == "" {
		return written, nil
	}
	b, err := release.EncodeJSON(rep)
	if err != nil {
		return written, err
	}
	if report == "-" {
		_, err = stdout.Write(b)
		return written, err
	}
	if err := writeFileAtomic(report, b); err != nil {
		return written, usageErr("--report %s: %v", report, err)
	}
	return append(written, report), nil
}

// rankNames renumbers the named features of rows, numbered by v in the
// order first read, by their rank among v's names, as the run's
// vocabulary numbers them (matrix.SortedVocab): ties of the risk's
// exposing list then break as the job's do. It returns the ranked
// vocabulary.
func rankNames(rows [][]uint32, v *matrix.Vocab) (*matrix.Vocab, error) {
	keys := make([][]byte, v.Len())
	for id := range keys {
		keys[id] = v.Key(uint32(id))
	}
	ranked, err := matrix.SortedVocab(v.Values(), slices.Clone(keys))
	if err != nil {
		return nil, err
	}
	rank := make([]uint32, len(keys))
	for id, k := range keys {
		rank[id], _ = ranked.Lookup(k)
	}
	for _, r := range rows {
		for i, f := range r {
			r[i] = rank[f]
		}
		slices.Sort(r)
	}
	return ranked, nil
}

// interruptible is a context that the first SIGINT or SIGTERM cancels
// with a release.InterruptedError (exit 128 + the signal), so that a job
// stops and what it wrote is removed; stop ends the trap.
func interruptible() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	untrap := release.TrapSignals(cancel)
	return ctx, func() {
		untrap()
		cancel(nil)
	}
}

// scratchDir is where assess --exact's job writes: scratch, else the
// directory of report (a file or object), else the local temp directory.
func scratchDir(scratch, report string) string {
	switch {
	case scratch != "":
		return scratch
	case report != "" && report != "-":
		dir, _ := storage.Split(report)
		return dir
	}
	return os.TempDir()
}

// readMatrix holds rows as a matrix, users named by their number.
func readMatrix(rows [][]uint32) *matrix.Matrix {
	m := matrix.New(len(rows), 0)
	for i, r := range rows {
		m.Append("s"+strconv.Itoa(i), r)
	}
	return m
}

// checkAssessOutputs refuses a --report or --plot that would replace an
// input file, be read as input by the next run (a .parquet name), or be
// the other; a --plot that is not a .png name.
func checkAssessOutputs(report, plotPath string, files []string) error {
	if plotPath != "" && !strings.HasSuffix(plotPath, ".png") {
		return usageErr("--plot %s: want a .png name (the plot is a PNG)", plotPath)
	}
	if plotPath != "" && storage.Clean(plotPath) == storage.Clean(report) {
		return usageErr("--plot %s is also --report", plotPath)
	}
	for _, o := range [][2]string{{"--report", report}, {"--plot", plotPath}} {
		flagName, path := o[0], o[1]
		if path == "" || path == "-" {
			continue
		}
		if strings.HasSuffix(path, ".parquet") {
			return usageErr("%s %s: a .parquet name would be read as input", flagName, path)
		}
		if err := storage.CheckLiteral(path); err != nil {
			return usageErr("%s %v", flagName, err)
		}
		for _, f := range files {
			if storage.Clean(f) == storage.Clean(path) {
				return usageErr("%s %s is an input file", flagName, path)
			}
		}
	}
	return nil
}

func parseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, usageErr("--k %q: want a comma list of integers", s)
		}
		if err := checkK(k); err != nil {
			return nil, err
		}
		if !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks, nil
}

func parseModes(s string) ([]matrix.Mode, error) {
	var modes []matrix.Mode
	for _, f := range strings.Split(s, ",") {
		m, err := matrix.ParseMode(strings.TrimSpace(f))
		if err != nil {
			return nil, usageErr("--mode: %v", err)
		}
		if !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	return modes, nil
}

// printAssess writes the human-readable summary of rep.
func printAssess(w io.Writer, rep *smoothanonpb.Assessment) {
	r := rep.Risk
	kind := "upper bounds: a set unique in the sample may be shared outside it"
	switch {
	case rep.RiskExact:
		kind = fmt.Sprintf("exact: counted over every row by a job, %.1f s", rep.RiskSeconds)
	case rep.WholeInput:
		kind = "exact: the sample is the whole input"
	}
	users := fmt.Sprint(rep.Users)
	if rep.UsersEstimated {
		users = fmt.Sprintf("~%d (estimated from %d pairs)", rep.Users, rep.InputRows)
	}
	fmt.Fprintf(w, "input %s: %s users (%s form); read %d rows, %d entries (%.2f per row), %d features; priced from %d rows\n",
		rep.Input, users, rep.Shape, r.Rows, r.Entries, float64(r.Entries)/float64(max(1, r.Rows)), r.Features, rep.SampleRows)
	fmt.Fprintf(w, "risk (%s):\n  unique feature sets: %.1f%% of users\n", kind, 100*r.Unique)
	for _, b := range r.BelowK {
		fmt.Fprintf(w, "  in a set held by fewer than %d users: %.1f%%\n", b.K, 100*b.Share)
	}
	if len(r.Exposing) > 0 {
		var top []string
		for _, f := range r.Exposing[:min(5, len(r.Exposing))] {
			name := f.Name
			if name == "" {
				name = strconv.FormatUint(uint64(f.Feature), 10)
			}
			top = append(top, fmt.Sprintf("%s (%d users)", name, f.Rows))
		}
		fmt.Fprintf(w, "  features exposing the most unique users: %s\n", strings.Join(top, ", "))
	}
	fmt.Fprintf(w, "price (predicted for `run` with --chunk_key %s --start %s --chunk_size %d; 95%% interval):\n", rep.ChunkKey, rep.Start, rep.ChunkSize)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tk\tJaccard\tinterval\tsuppressed\tcreated\tusers/class\tchunks\t")
	for _, pt := range rep.Price {
		note := ""
		if pt.Extrapolated {
			note = " *"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%%s\t%.1f–%.1f%%\t%.1f%%\t%.1f%%\t%.1f\t%d\t\n", pt.Mode, pt.K, 100*pt.Predicted.Jaccard, note,
			100*pt.Low.Jaccard, 100*pt.High.Jaccard, 100*pt.Predicted.Suppressed, 100*pt.Predicted.Created, pt.Predicted.ClassRows, pt.Chunks)
	}
	tw.Flush()
	fmt.Fprintf(w, "(* a term extrapolated beyond the sample; %.1f s)\n", rep.Seconds)
}
