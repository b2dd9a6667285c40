package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"

	// Runners selectable by name, and the optimized runtime.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/exec/optimized"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/sensitive"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
	"github.com/smoothanon/smoothanon/verify"
)

// DefaultChunkSize is the target number of rows solved together.
const DefaultChunkSize = 100_000

// DefaultPoolShare is the share of every chunk's rows that `smoothanon
// run` sets aside to solve again in pools (Params.PoolShare).
const DefaultPoolShare = 0.4

// Params configure a run.
type Params struct {
	// Input is a Parquet file, directory, glob or comma list (matrix.ListFiles). Required.
	Input string
	// Layout is the input's shape and columns (matrix.Layout); every file
	// must have the same. Optional; default the zero Layout: the shape
	// from the schema, columns user_id and features or feature. A
	// long-form input's pairs are grouped by user in the job
	// (transforms.GroupPairs); a user without features has no pair, so
	// is absent from such an input and its release.
	Layout matrix.Layout
	// Output is the release directory, local or a gs:// or s3:// URI.
	// Required; must not exist or be empty unless Overwrite.
	Output string
	// OutputShape is the release's shape: matrix.ShapeList, a row per
	// user, or matrix.ShapeLong, a row per released (user, feature) pair,
	// each user's pairs on consecutive rows of one shard; a user released
	// without features then has no row, and the manifest counts the users
	// (storage.Manifest.Users). Optional; default (ShapeAuto) list form.
	OutputShape matrix.Shape
	// Overwrite allows replacing a non-empty Output or another run's
	// release. Optional; default false.
	Overwrite bool
	// RunID names the run in the release's _SUCCESS manifest; a run into
	// an Output whose manifest carries the same id is a no-op that
	// succeeds. Optional; default a random id.
	RunID string
	// Solver configures the solve of every chunk and pool, and is carried
	// whole into the job graph (transforms.SolveParams.Solver). Required:
	// Solver.K, the anonymity parameter, at least 2 (k = 1 needs no
	// pipeline). The rest as solver.Params documents, with these meanings
	// in the pipeline:
	//   - Solver.K and Solver.Mode are also what Verify checks and the
	//     report states.
	//   - Solver.Seed is the run's seed: it seeds MinHash, the sample of
	//     KeyAuto and AutoStart, and, mixed with the chunk's or pool's
	//     number, each solve (transforms.ChunkSeed), so that the release
	//     is reproducible.
	//   - Solver.Workers is per chunk; 0 means GOMAXPROCS, or 1 under
	//     solver.StartMondrian (transforms.SolveParams).
	Solver solver.Params
	// Sensitive is the list of sensitive features (sensitive.Parse): ids,
	// or names where the input's features are named. They follow the
	// sensitive rule of Solver.SensitiveK and Solver.SensitivePolicy: the
	// solver and Verify apply it, the release's files record the list
	// (sensitive.Record, matrix.MetaSensitive) and the report counts the
	// sensitive entries. The run sets Solver.Sensitive from it: ids
	// before the job, names on the workers, once the job has numbered
	// them (transforms.SensitiveNames). Optional; default none, and
	// Solver.Sensitive must be empty either way.
	Sensitive *sensitive.List
	// ChunkSize is the target rows per chunk. Optional; default
	// DefaultChunkSize; >= 2·Solver.K.
	ChunkSize int64
	// AutoStart replaces Solver.Start by the choice made from the sample that
	// KeyAuto reads (transforms.ChooseKey): solver.StartMondrian where
	// the sample lacks community structure (ChooseKey picks hub) and the
	// variant is Improved, solver.StartBoth otherwise. Optional; default
	// false (Solver.Start as given).
	AutoStart bool
	// Key leads the chunking sort key (see transforms.Key); KeyAuto
	// picks spectral or hub from a sample of the input
	// (transforms.ChooseKey). Optional; default transforms.KeySpectral.
	Key transforms.Key
	// PoolShare is the share of every chunk's rows, its worst-served
	// clusters, solved again together with the same share of its
	// neighbouring chunks (transforms.Pool); the release's Jaccard cannot
	// fall. Optional; default 0 (no pools); else within
	// [transforms.MinPoolShare, transforms.MaxPoolShare].
	PoolShare float64
	// SpectralIterations is the number of averaging rounds of the spectral
	// key. Optional; default transforms.DefaultSpectralIterations.
	SpectralIterations int
	// Shards is the number of output files. Optional; default 0 = one per ~1M rows.
	Shards int64
	// Runner is a Beam runner name: prism, flink, universal, dataflow; or
	// direct, which runs prism, Beam's recommended replacement for its
	// deprecated Go direct runner (DirectNote goes to Stderr). Optional;
	// default prism.
	Runner string
	// PseudonymKey, when set, replaces every user id by its pseudonym
	// under the key right after reading (transforms.Pseudonymize) and
	// marks the release's files (pseudonym.MetadataKey). Optional; default
	// nil keeps the input's ids. The key travels inside the job graph.
	PseudonymKey *pseudonym.Key
	// Endpoint and EnvironmentType override Beam's --endpoint and
	// --environment_type for this run. Optional; default the flags' values.
	Endpoint, EnvironmentType string
	// ConnectTimeout bounds how long the job endpoint (flink, universal)
	// may take to answer before the run fails. Optional; default
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Report is where the run report goes: "" nowhere, "-" Stdout, else a
	// file or object (release.Plan.Report). Optional.
	Report string
	Stdout io.Writer
	// KeyOut is where PseudonymKey, drawn for this run, is saved once the
	// release is published (release.Plan.KeyOut). Optional.
	KeyOut string
	// Date is recorded in the report (run --date). Optional.
	Date string
	// Gate is the quality gate a valid release must meet to be published
	// (release.Plan.Gate). Optional; the zero Gate checks nothing.
	Gate release.Gate
	// FeatureTable is where the full per-feature table goes once the
	// release is published (release.Plan.FeatureTable); the job stages it
	// (transforms.Accounting). Optional; "" writes none.
	FeatureTable string
	// Stderr receives the run's notes (leftovers removed, keys saved).
	// Optional; default none.
	Stderr io.Writer
}

// DirectNote is the line Run and DryRun write to Params.Stderr for
// Params.Runner direct.
const DirectNote = "smoothanon: runner direct runs prism, Beam's recommended replacement for its deprecated Go direct runner"

// DefaultConnectTimeout is Params.ConnectTimeout's default.
const DefaultConnectTimeout = 60 * time.Second

// CheckParams reports the first bad parameter.
func CheckParams(p Params) error {
	if p.Input == "" {
		return errors.New("no input (--input)")
	}
	if p.Output == "" {
		return errors.New("no output directory (--output)")
	}
	if err := transforms.CheckSolveParams(transforms.SolveParams{Solver: p.Solver, PoolShare: p.PoolShare}); err != nil {
		return err
	}
	if len(p.Solver.Sensitive) > 0 {
		return errors.New("sensitive features as Solver.Sensitive: give the list as Params.Sensitive")
	}
	cs := p.ChunkSize
	if cs == 0 {
		cs = DefaultChunkSize
	}
	if cs < 2*int64(p.Solver.K) {
		return fmt.Errorf("chunk size %d below 2k=%d", cs, 2*p.Solver.K)
	}
	if p.Key < transforms.KeySpectral || p.Key > transforms.KeyAuto {
		return fmt.Errorf("invalid chunk key %d", int(p.Key))
	}
	if p.SpectralIterations < 0 || p.SpectralIterations > 1000 {
		return fmt.Errorf("spectral iterations %d, want 1..1000 (0 means the default %d)", p.SpectralIterations, transforms.DefaultSpectralIterations)
	}
	if p.Shards < 0 {
		return fmt.Errorf("shards %d, want >= 0", p.Shards)
	}
	if p.OutputShape != matrix.ShapeAuto && p.OutputShape != matrix.ShapeList && p.OutputShape != matrix.ShapeLong {
		return fmt.Errorf("output shape %v, want list or long", p.OutputShape)
	}
	return CheckRunner(p.Runner, p.Endpoint)
}

// CheckRunner says whether the pipeline runs on runner, given what it
// needs: flink, spark and universal submit to a job service, at endpoint
// or else Beam's --endpoint, so one of them must be set.
func CheckRunner(runner, endpoint string) error {
	switch runner {
	case "", "prism", "direct", "dataflow":
	case "flink", "spark", "universal":
		if endpoint == "" && *jobopts.Endpoint == "" {
			return fmt.Errorf("runner %s submits to a job service: give its address as --endpoint host:port (e.g. localhost:8099)", runner)
		}
	default:
		return fmt.Errorf("unknown runner %q (want prism, direct, flink, universal or dataflow)", runner)
	}
	return nil
}

func withDefaults(p Params) Params {
	if p.ChunkSize == 0 {
		p.ChunkSize = DefaultChunkSize
	}
	if p.Runner == "" || p.Runner == "direct" {
		p.Runner = "prism"
	}
	if p.ConnectTimeout == 0 {
		p.ConnectTimeout = DefaultConnectTimeout
	}
	return p
}

// noteDirect writes DirectNote to p.Stderr when p asks for the direct
// runner, which withDefaults replaces by prism.
func noteDirect(p Params) {
	if p.Runner == "direct" && p.Stderr != nil {
		fmt.Fprintln(p.Stderr, DirectNote)
	}
}

// InputError is a problem with the input found before the job starts.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Input is what the input files' footers say.
type Input struct {
	// Files are the input files, sorted.
	Files []string
	// Rows is the number of rows of all files: in long form, the pairs,
	// which bound the users from above.
	Rows int64
	// FeatureValues bounds the entries of all files from above
	// (matrix.File.FeatureValues).
	FeatureValues int64
	// Layout is the files' resolved layout (matrix.InspectFiles); the zero
	// Layout stands for list form with the default columns.
	Layout matrix.Layout
}

// long says the input is long form: its rows are pairs, and the users
// are known only once the job has grouped them.
func (in Input) long() bool { return in.Layout.Shape == matrix.ShapeLong }

// users is the input's users when the footers tell (list form), else 0.
func (in Input) users() int64 {
	if in.long() {
		return 0
	}
	return in.Rows
}

// layout is in.Layout, the zero Layout resolved to list form with the
// default columns.
func (in Input) layout() matrix.Layout {
	if in.Layout == (matrix.Layout{}) {
		return matrix.Layout{Shape: matrix.ShapeList, User: matrix.ColUserID, Feature: matrix.ColFeatures, Values: matrix.ValuesIDs}
	}
	return in.Layout
}

// Inspect lists the input files, checks that each opens with the
// columns of l and is not a release (matrix.OpenInputAs), that all share
// one layout, and returns them with that layout and the counts from
// their footers.
func Inspect(spec string, l matrix.Layout) (Input, error) {
	files, err := matrix.ListFiles(spec)
	if err != nil {
		return Input{}, err
	}
	in := Input{Files: files}
	if in.Layout, in.Rows, in.FeatureValues, err = matrix.InspectFiles(files, l); err != nil {
		return Input{}, err
	}
	return in, nil
}

// Build constructs the pipeline for the input in writing into staging.
// p.Key must not be transforms.KeyAuto: Run and DryRun resolve it first.
func Build(p Params, in Input, staging string) *beam.Pipeline {
	return build(p, in, staging, hooks{})
}

// hooks let tests break a run on purpose, to prove that nothing is
// published then. tamper rewrites the released rows between Solve and
// Verify/Write; afterWrite sees Write's Stats before they reach Report.
type hooks struct {
	tamper, afterWrite func(s beam.Scope, col beam.PCollection) beam.PCollection
	// runRows, when set, is WriteParams.RunRows: tests make shards of
	// several runs with it.
	runRows int64
}

// readRows is the PCollection<matrix.Matrix> of in's rows, its files
// taken in name order: read in list form, grouped in long form. Named
// features are numbered by the vocabulary BuildVocab writes to vocabPath
// (given exactly when in's features are named).
func readRows(s beam.Scope, in Input, vocabPath string) beam.PCollection {
	files := slices.Sorted(slices.Values(in.Files))
	var vocab beam.PCollection
	if vocabPath != "" {
		vocab = transforms.BuildVocab(s, files, transforms.VocabParams{Layout: in.layout(), Path: vocabPath,
			Shards: max(transforms.GroupShards(in.Rows), transforms.DefaultVocabShards)})
	}
	if in.long() {
		return transforms.GroupPairs(s, files, transforms.GroupParams{Layout: in.layout(), Vocab: vocab, Shards: transforms.GroupShards(in.Rows)})
	}
	return transforms.Read(s, files, transforms.ReadParams{Layout: in.layout(), Vocab: vocab})
}

func build(p Params, in Input, staging string, h hooks) *beam.Pipeline {
	p = withDefaults(p)
	pl, s := beam.NewPipelineWithRoot()
	var vocabPath string // named features: their vocabulary
	if in.Layout.Values.Named() {
		vocabPath = release.StagedVocab(staging)
	}
	rows := readRows(s, in, vocabPath)
	sens := sensitiveRule(p, vocabPath)
	var record string
	var sensNames *transforms.SensitiveNames
	if sens != nil {
		record, sensNames = sens.Record, sens.Names
	}
	md := release.FileMetadata(p.PseudonymKey, record)
	if p.PseudonymKey != nil {
		rows = transforms.Pseudonymize(s, rows, transforms.PseudonymizeParams{Key: *p.PseudonymKey})
	}
	k, mode := p.Solver.K, p.Solver.Mode
	sig := transforms.Signature(s, rows, transforms.SignatureParams{Seed: p.Solver.Seed, Key: p.Key, Iterations: p.SpectralIterations})
	chunks := transforms.Chunk(s, sig, transforms.ChunkParams{ChunkSize: p.ChunkSize, MinRows: 2 * int64(k), K: int64(k),
		Total: in.users(), Sharpen: p.Key == transforms.KeySpectral, CutAtGaps: p.Key == transforms.KeySpectral})
	sp := transforms.SolveParams{Solver: p.Solver, PoolShare: p.PoolShare, SensitiveNames: sensNames}
	out, setAside, chunkStats := transforms.Solve(s, chunks, sp)
	var stats []beam.PCollection
	if p.PoolShare > 0 {
		var poolStats beam.PCollection
		out, poolStats = transforms.Pool(s, out, setAside, chunkStats, transforms.PoolParams{Solve: sp})
		stats = append(stats, poolStats)
	}
	if h.tamper != nil {
		out = h.tamper(s, out)
	}
	verified := transforms.Verify(s, out, transforms.VerifyParams{K: k, Mode: mode, Sensitive: sens})
	var table string
	if p.FeatureTable != "" {
		table = release.StagedFeatureTable(staging)
	}
	accounted := transforms.Accounting(s, out, transforms.AccountingParams{Table: table, Vocab: vocabPath, Sensitive: sens})
	written := transforms.Write(s, out, transforms.WriteParams{Dir: release.StagedShards(staging), Shards: p.Shards, Metadata: md, Shape: p.OutputShape, Vocab: vocabPath,
		RunRows: h.runRows, Rows: in.Rows, MaxEntries: maxEntriesOut(in.FeatureValues, mode)})
	if h.afterWrite != nil {
		written = h.afterWrite(s, written)
	}
	stats = append(stats, verified, accounted, written, transforms.CountRows(s, rows))
	all := transforms.CombineStats(s, stats, chunkStats)
	transforms.Report(s, all, transforms.ReportParams{Staging: staging, K: k, Mode: mode, ChunkSize: p.ChunkSize,
		InputFiles: int64(len(in.Files)), PoolShare: p.PoolShare, Metadata: md, Shape: p.OutputShape, Values: in.layout().Values, Sensitive: sens})
	return pl
}

// withSensitive readies p's sensitive list for in: its entries in the
// form they are compared in (sensitive.List.Canonical, so "07" and "7"
// are one feature id and hash alike), and for feature ids, their ids as
// Solver.Sensitive. An entry that is not a value of in's features is the
// error.
func withSensitive(p Params, in Input) (Params, error) {
	if p.Sensitive == nil {
		return p, nil
	}
	l, err := p.Sensitive.Canonical(in.layout().Values)
	if err != nil {
		return p, fmt.Errorf("sensitive list for input %s: %w", p.Input, err)
	}
	p.Sensitive = l
	if !in.Layout.Values.Named() {
		p.Solver.Sensitive, err = l.IDs()
	}
	return p, err
}

// sensitiveRule is the sensitive rule of p's release (withSensitive
// readied its list); nil without a list. Named features (vocabPath set)
// take the list as names, which the workers resolve through the run's
// vocabulary.
func sensitiveRule(p Params, vocabPath string) *transforms.SensitiveRule {
	if p.Sensitive == nil {
		return nil
	}
	r := &transforms.SensitiveRule{Features: p.Solver.Sensitive, K: int64(max(p.Solver.K, p.Solver.SensitiveK)),
		Drop: p.Solver.SensitivePolicy == solver.SensitiveDrop, Record: sensitive.NewRecord(p.Sensitive, p.Solver).String(),
		Listed: int64(len(p.Sensitive.Entries))}
	if vocabPath != "" {
		r.Names = &transforms.SensitiveNames{Entries: p.Sensitive.Entries, Vocab: vocabPath}
	}
	return r
}

// Result is the outcome of Run.
type Result struct {
	// Report is the verdict and utility of the release, with
	// PipelineInfo, as written to Params.Report; nil when the runner only
	// translated the job (dataflow --dry_run), the release was already
	// published, or the run stopped before it had one.
	Report *smoothanonpb.RunReport
	// RunID is the run's id, as written in the release's manifest.
	RunID string
	// AlreadyPublished says Output already held the release of RunID: the
	// run did nothing.
	AlreadyPublished bool
	// Metrics are Beam's counters ("namespace/name" → value, summed over
	// steps) and distributions, when the runner reports them.
	Counters      map[string]int64
	Distributions map[string]metrics.DistributionValue
	// FlinkPartitions is the partitions of every stage of a Flink job
	// (FlinkPartitions); 0 on other runners.
	FlinkPartitions int
}

// ErrVerification is returned (wrapped) when the release failed
// verification; Result.Report says why and nothing was published.
var ErrVerification = release.ErrVerification

// Run checks params and input, runs the pipeline, and publishes its
// release if it verified: the whole lifecycle of release.Run, with the
// job between Begin and Finish. Errors: *InputError (bad input or
// outputs), ErrVerification, *release.LostRaceError,
// *release.InterruptedError, and anything else is the runner's.
func Run(ctx context.Context, p Params) (*Result, error) {
	return run(ctx, p, hooks{})
}

func run(ctx context.Context, p Params, h hooks) (*Result, error) {
	if err := CheckParams(p); err != nil {
		return nil, &InputError{err}
	}
	noteDirect(p)
	p = withDefaults(p)
	if p.RunID == "" {
		p.RunID = randomID()
	}
	out, err := outputPath(p.Output)
	if err != nil {
		return nil, &InputError{err}
	}
	p.Output = out
	in, err := Inspect(p.Input, p.Layout)
	if err != nil {
		return nil, &InputError{err}
	}
	if p, err = withSensitive(p, in); err != nil {
		return nil, &InputError{err}
	}
	if in.Rows < int64(p.Solver.K) {
		return nil, &InputError{fmt.Errorf("input %s has %d rows, fewer than k=%d: no k-anonymous release exists", p.Input, in.Rows, p.Solver.K)}
	}
	for i, f := range in.Files {
		if in.Files[i], err = absPath(f); err != nil {
			return nil, err
		}
	}
	lc, err := release.Begin(ctx, release.Plan{InputSpec: p.Input, InputFiles: in.Files, InputRows: in.Rows, Users: in.users(), Output: out, Dir: true, RunID: p.RunID,
		Shape: p.OutputShape, Overwrite: p.Overwrite, Report: p.Report, Stdout: p.Stdout, KeyOut: p.KeyOut, Date: p.Date, Gate: p.Gate,
		FeatureTable: p.FeatureTable}, p.Stderr)
	var ap *release.AlreadyPublishedError
	switch {
	case errors.As(err, &ap):
		return &Result{RunID: p.RunID, AlreadyPublished: true}, nil
	case err != nil:
		return nil, &InputError{err}
	}
	res := &Result{RunID: p.RunID}
	rep, jobErr := runJob(lc, p, in, h, res)
	if res.Report == nil && rep == nil && jobErr == nil {
		// A runner that only translated the job (dataflow --dry_run).
		lc.Abandon()
		return res, nil
	}
	final, err := lc.Finish(release.Outcome{Report: rep, Err: jobErr, Key: p.PseudonymKey})
	if rep != nil || final.Published || final.NotPublished != "" {
		res.Report = final
	}
	return res, err
}

// runJob runs the job into lc's staging and returns its report, or why
// there is none usable: an *InputError (bad input found by the job), or
// the runner's error.
func runJob(lc *release.Run, p Params, in Input, h hooks, res *Result) (*smoothanonpb.RunReport, error) {
	ctx := lc.Context()
	auto, err := resolveAuto(&p, in)
	if err != nil {
		return nil, &InputError{err}
	}
	ran, secs, err := launch(ctx, p, in, func() *beam.Pipeline { return build(p, in, lc.Staging(), h) }, res)
	if !ran || err != nil {
		return nil, err
	}
	rep, err := release.ReadReport(ctx, release.StagedReport(lc.Staging()))
	if err != nil {
		return nil, fmt.Errorf("pipeline finished without a report: %w", err)
	}
	describeRun(rep, p, in, auto, secs, res)
	if in.Layout.Values.Named() {
		v, err := matrix.ReadVocabFile(ctx, release.StagedVocab(lc.Staging()))
		if err != nil {
			return nil, fmt.Errorf("pipeline finished without its vocabulary: %w", err)
		}
		verify.NameFeatures(rep.Features, v.Name)
		rep.Input.Names = int64(v.Len())
	}
	if rep.DuplicateUsers > 0 {
		return rep, &InputError{locateDuplicates(ctx, lc.Staging(), in.Files, in.layout(), p.PseudonymKey)}
	}
	return rep, nil
}

// launch runs the job that build makes on p's runner (build is called
// with the runner's options set), with TMPDIR a fresh directory of its
// own, and puts its metrics into res. ran is false when nothing ran
// (--dry_run); secs is the job's wall time.
func launch(ctx context.Context, p Params, in Input, build func() *beam.Pipeline, res *Result) (ran bool, secs float64, err error) {
	if err := probeEndpoint(ctx, p); err != nil {
		return false, 0, err
	}
	tmp, removeTmp, err := release.MakeTempDir()
	if err != nil {
		return false, 0, err
	}
	defer removeTmp()
	oldTmp, hadTmp := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", tmp)
	defer func() {
		if hadTmp {
			os.Setenv("TMPDIR", oldTmp)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}()
	if !beam.Initialized() {
		beam.Init()
	}
	restore := setRunnerOptions(p)
	defer restore()
	start := time.Now()
	job := build()
	var pr beam.PipelineResult
	var runErr error
	if p.Runner == "flink" {
		res.FlinkPartitions = FlinkPartitions(in, *jobopts.Parallelism)
		pr, runErr = runFlink(ctx, job, res.FlinkPartitions)
	} else {
		pr, runErr = beam.Run(ctx, p.Runner, job)
	}
	secs = time.Since(start).Seconds()
	if pr == nil && runErr == nil {
		return false, secs, nil
	}
	if pr != nil {
		res.Counters, res.Distributions = metricsOf(pr)
	}
	if runErr != nil {
		if line, ok := transforms.JobInputError(runErr); ok {
			return true, secs, &InputError{errors.New(line)}
		}
		if ctx.Err() != nil {
			return true, secs, ctx.Err()
		}
		return true, secs, fmt.Errorf("pipeline failed: %w%s", runErr, runnerHint(runErr, p.ChunkSize))
	}
	return true, secs, nil
}

// describeRun adds what the launcher knows of the run to the job's report.
func describeRun(rep *smoothanonpb.RunReport, p Params, in Input, auto autoChoices, secs float64, res *Result) {
	st := matrix.ReadStats{Layout: in.layout()}
	if in.long() {
		// Every row of a long-form file is a pair; the job counts the
		// repeats it drops, when the runner reports its counters.
		st.Pairs, st.DroppedPairs = in.Rows, res.Counters["smoothanon/pairs_repeated"]
	}
	rep.Input = release.DescribeInput(st)
	if rep.Pipeline == nil {
		rep.Pipeline = &smoothanonpb.PipelineInfo{}
	}
	if rep.Solve == nil {
		rep.Solve = &smoothanonpb.SolveInfo{}
	}
	rep.Pipeline.Runner = p.Runner
	rep.Pipeline.Seconds = secs
	sp := p.Solver
	rep.Solve.Seed = sp.Seed
	rep.Solve.Variant = sp.Variant.String()
	rep.Solve.NeighbourSearch = sp.Search.String() // per chunk: exact where the bound is not reached
	rep.Solve.Start = sp.Start.String()
	rep.Solve.Beta = int32(sp.Beta)
	rep.Solve.Restarts = int32(solver.RanRestarts(sp))
	if sp.Beta == 0 {
		rep.Solve.Beta = solver.DefaultBeta
	}
	rep.Pipeline.ChunkKey = p.Key.String()
	rep.Pipeline.ChunkKeyAuto = auto.Evidence
	rep.Pipeline.FlinkPartitions = int64(res.FlinkPartitions)
	rep.Pipeline.Counters = res.Counters
	rep.Pipeline.Distributions = map[string]*smoothanonpb.Distribution{}
	for name, d := range res.Distributions {
		pd := &smoothanonpb.Distribution{Count: d.Count, Sum: d.Sum, Min: d.Min, Max: d.Max}
		if d.Count > 0 {
			pd.Mean = float64(d.Sum) / float64(d.Count)
		}
		rep.Pipeline.Distributions[name] = pd
	}
}

// maxEntriesOut bounds a release's entries from the input's: a smooth
// class's output feature is held by at least half the class, so its rows
// carry at most twice the entries they held; a non-smooth release only
// suppresses.
func maxEntriesOut(entriesIn int64, mode matrix.Mode) int64 {
	if mode == matrix.NonSmooth {
		return entriesIn
	}
	return 2 * entriesIn
}

func randomID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// setRunnerOptions points Beam's global job options at this run's
// endpoint and environment and returns a function restoring them.
func setRunnerOptions(p Params) func() {
	ep, env := *jobopts.Endpoint, *jobopts.EnvironmentType
	if p.Endpoint != "" {
		*jobopts.Endpoint = p.Endpoint
	}
	if p.EnvironmentType != "" {
		*jobopts.EnvironmentType = p.EnvironmentType
	}
	return func() { *jobopts.Endpoint, *jobopts.EnvironmentType = ep, env }
}

// metricsOf collects pr's metrics; a result of a failed job may hold none
// (Beam's universal runner then panics on Metrics).
func metricsOf(pr beam.PipelineResult) (counters map[string]int64, dists map[string]metrics.DistributionValue) {
	defer func() {
		if recover() != nil {
			counters, dists = nil, nil
		}
	}()
	return collectMetrics(pr.Metrics())
}

func collectMetrics(r metrics.Results) (map[string]int64, map[string]metrics.DistributionValue) {
	all := r.AllMetrics()
	counters := map[string]int64{}
	for _, c := range all.Counters() {
		counters[c.Namespace()+"/"+c.Name()] += c.Result()
	}
	dists := map[string]metrics.DistributionValue{}
	for _, d := range all.Distributions() {
		k := d.Key.Namespace + "/" + d.Name()
		v, old := d.Result(), dists[k]
		if old.Count > 0 {
			v.Min, v.Max = min(v.Min, old.Min), max(v.Max, old.Max)
			v.Count += old.Count
			v.Sum += old.Sum
		}
		dists[k] = v
	}
	return counters, dists
}
