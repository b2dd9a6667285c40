package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/verify"
)

// exitLostRace is the exit code of a run that lost the publish race:
// another run published the output first; this one published nothing.
const exitLostRace = 4

// exitFor maps an error of a run to its exit code (main.go's contract):
// fallback is the code of an error of no known class.
func exitFor(err error, fallback int) error {
	var (
		ee   *exitError
		pe   *release.PlanError
		ie   *pipeline.InputError
		se   *storage.Error
		fe   *matrix.FileError
		ke   *pseudonym.KeyError
		oe   *release.OutputError
		lost *release.LostRaceError
		gate *release.GateError
		intr *release.InterruptedError
		epe  *pipeline.EndpointError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return err
	case errors.As(err, &intr):
		return &exitError{code: intr.ExitCode(), err: err}
	case errors.As(err, &lost):
		return &exitError{code: exitLostRace, err: err}
	case errors.As(err, &gate):
		return &exitError{code: exitGate, err: err}
	case errors.Is(err, release.ErrVerification):
		return &exitError{code: 1, err: err}
	case errors.As(err, &epe):
		return &exitError{code: 3, err: err}
	case errors.As(err, &pe), errors.As(err, &ie), errors.As(err, &se), errors.As(err, &fe), errors.As(err, &ke), errors.As(err, &oe):
		return &exitError{code: 2, err: err}
	}
	return &exitError{code: fallback, err: err}
}

// fileFlags are the flags of the commands that release one file (solve,
// baseline): where the input and the release are, and how ids are kept.
type fileFlags struct {
	input, output, metricsOut *string
	featureReport             *string
	overwrite, quiet          *bool
	dedupe                    *matrix.DedupePolicy
	layout                    *matrix.Layout
	timeout                   *time.Duration
	ids                       *userIDFlags
	gate                      *gateFlags
	// vocab names the input's features when they are names, once work
	// has read it; nil for ids.
	vocab *matrix.Vocab
}

// addFileFlags defines the input/output flags in fs's current group;
// addIDFlags defines the user id flags later, in the privacy group.
func addFileFlags(fs *groupedFlags, quietUsage string) *fileFlags {
	return &fileFlags{
		input:         fs.String("input", "", "input Parquet: file, directory, glob or comma list (required)"),
		output:        fs.String("output", "", "release Parquet file, published atomically (required; must not exist unless --overwrite)"),
		overwrite:     fs.Bool("overwrite", false, "replace the release (and report) already at --output; a file that is not a release is never replaced"),
		metricsOut:    fs.String("metrics_out", "", "write the run report (JSON) here at the end of the run, published or not; - for stdout"),
		featureReport: featureReportFlag(fs.FlagSet),
		quiet:         fs.Bool("quiet", false, quietUsage),
		dedupe:        dedupeFlag(fs.FlagSet, "repeated user ids in the input (list form): refuse or union"),
		layout:        layoutFlags(fs.FlagSet),
		timeout:       connectTimeoutFlag(fs.FlagSet),
	}
}

func (f *fileFlags) addIDFlags(fs *groupedFlags) { f.ids = addUserIDFlags(fs.FlagSet, true) }

// missing says which required flag was not given, or which gate
// threshold is out of range.
func (f *fileFlags) missing() error {
	switch {
	case *f.input == "":
		return usageErr("missing --input")
	case *f.output == "":
		return usageErr("missing --output")
	}
	_, err := f.gate.gate()
	return err
}

// release runs the lifecycle of a single-file release for cmd: it reads
// the input, pseudonymizes its ids before anything orders the rows (so
// no order follows the real ids), hands the rows to solve, and publishes
// what solve returns (release.Begin, then release.Finish). It returns the
// published release's report, or nil for the retry of a run that
// published and died before saving its key (which only saves the key and
// says so); errors carry their exit code.
func (f *fileFlags) release(cmd string, stdout, stderr io.Writer, solve func(ctx context.Context, in *matrix.Matrix) (release.Outcome, error)) (*smoothanonpb.RunReport, error) {
	setStoreTimeout(*f.timeout)
	key, err := f.ids.resolve()
	if err != nil {
		return nil, err
	}
	files, err := matrix.ListFiles(*f.input)
	if err != nil {
		return nil, inputErr(err)
	}
	gate, err := f.gate.gate()
	if err != nil {
		return nil, err
	}
	plan := release.Plan{InputSpec: *f.input, InputFiles: files, Output: *f.output, Overwrite: *f.overwrite,
		Report: *f.metricsOut, Stdout: stdout, KeyOut: *f.ids.out, Gate: gate, FeatureTable: *f.featureReport}
	warnUserIDs(stderr, cmd, *f.ids.mode, f.ids.source(), derefKey(key))
	lc, err := release.Begin(context.Background(), plan, stderr)
	var ap *release.AlreadyPublishedError
	if errors.As(err, &ap) {
		fmt.Fprintf(stderr, "smoothanon: %v\n", ap)
		return nil, nil
	}
	if err != nil {
		return nil, exitFor(err, 2)
	}
	o, err := f.work(lc.Context(), key, solve)
	if err != nil && o.Err == nil {
		o.Err = err
	}
	o.Key = key
	r, err := lc.Finish(o)
	problems(stderr, cmd, r)
	return r, exitFor(err, 2)
}

// work reads and pseudonymizes the input, then solves it; the report
// says how the input was read.
func (f *fileFlags) work(ctx context.Context, key *pseudonym.Key, solve func(context.Context, *matrix.Matrix) (release.Outcome, error)) (release.Outcome, error) {
	in, st, err := matrix.ReadMatrix(*f.input, matrix.ReadOptions{Dedupe: *f.dedupe, Layout: *f.layout})
	if err != nil {
		return release.Outcome{}, inputErr(err)
	}
	if in, err = pseudonymize(in, key); err != nil {
		return release.Outcome{}, inputErr(fmt.Errorf("%s: %w", *f.input, err))
	}
	f.vocab = st.Vocab
	o, err := solve(ctx, in)
	if o.Report != nil {
		o.Report.Input = release.DescribeInput(st)
	}
	o.Vocab = st.Vocab
	return o, err
}

// warnUserIDs says on stderr what a release's user ids let an attacker
// join: kept ids join every release of the population; a key given by
// file or variable joins every release made under it.
func warnUserIDs(stderr io.Writer, command string, mode pseudonym.Mode, src pseudonym.Source, key pseudonym.Key) {
	switch {
	case mode == pseudonym.Keep:
		fmt.Fprintf(stderr, "smoothanon %s: warning: --user_ids keep: the release carries the input's user ids; releases of the same users join by id (docs/privacy.md)\n", command)
	case src.Given():
		fmt.Fprintf(stderr, "smoothanon %s: warning: a given pseudonym key (fingerprint %s): every release under this key joins by id with this one; draw a key per release unless that is meant\n", command, key.Fingerprint())
	}
}

// problems prints an invalid report's problems, one line each.
func problems(stderr io.Writer, command string, r *smoothanonpb.RunReport) {
	if r == nil || r.Valid {
		return
	}
	for _, p := range r.Problems {
		fmt.Fprintf(stderr, "smoothanon %s: problem: %s\n", command, p)
	}
}

// featureReportFlag is --feature_report: where the full per-feature table
// goes.
func featureReportFlag(fs *flag.FlagSet) *string {
	return fs.String("feature_report", "", "write the full per-feature table (CSV: feature,held,released,suppressed,created) here, only if the release is published; private like the input (docs/verification.md)")
}

// accountFeatures adds the per-feature accounting of the release out
// against its input in to o's report and, when table, the full table to
// o (release.Outcome.FeatureTable); features are named by vocab when it
// is not nil; with a sensitive list (sens), the table marks its features.
func accountFeatures(o *release.Outcome, in, out *matrix.Matrix, table bool, vocab *matrix.Vocab, sens *sensitiveFlags) error {
	counts, err := verify.CountFeatures(in, out)
	if err != nil {
		return err
	}
	var name func(uint32) string
	if vocab != nil {
		name = vocab.Name
	}
	o.Report.Features = verify.SummarizeFeatures(counts).Proto()
	if name != nil {
		verify.NameFeatures(o.Report.Features, name)
	}
	if table {
		var b bytes.Buffer
		opts := verify.FeatureTableOptions{Name: name}
		if sens.list != nil {
			opts.Sensitive = verify.SortedSet(sens.p.Sensitive)
		}
		if err := verify.WriteFeatureTable(&b, counts, opts); err != nil {
			return err
		}
		o.FeatureTable = b.Bytes()
	}
	return nil
}

// since formats seconds since start for summaries.
func since(start time.Time) float64 { return time.Since(start).Seconds() }

// setStoreTimeout sets how long an object store may take to answer.
func setStoreTimeout(d time.Duration) {
	if d > 0 {
		storage.SetTimeout(d)
	}
}
