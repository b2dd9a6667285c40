package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
)

// Stage names a point of a run's life. Fault is called at each.
type Stage string

const (
	// StageBegun: the plan is checked, leftovers swept, the staging made;
	// the work has not started.
	StageBegun Stage = "begun"
	// StageStaged: the work is done and its release valid; nothing of it
	// is in the output yet.
	StageStaged Stage = "staged"
	// StageCopied: the release's files are in the output under the run's
	// token, not yet claimed by a manifest.
	StageCopied Stage = "copied"
	// StageClaimed: the release is published; its key is not saved yet.
	StageClaimed Stage = "claimed"
	// StageSaved: the key is saved; the feature table and the report
	// are not written yet.
	StageSaved Stage = "saved"
	// StageTable: the feature table is written (when asked for); the
	// report is not.
	StageTable Stage = "table"
)

// Fault, when set, is called at every Stage of every run: tests kill or
// interrupt a run there to prove what each stage leaves. Nil in normal
// use.
var Fault func(Stage)

// Run is one run's lifecycle: check, stage, verify, publish, report, key.
// Begin starts it; the caller does the work with Context and, for a
// directory release, writes the job's output into Staging; Finish ends
// it, whatever happened, exactly once.
type Run struct {
	plan    Plan
	token   string
	staging string
	lease   *lease
	ctx     context.Context
	cancel  context.CancelCauseFunc
	// untrap ends the signal trap (TrapSignals).
	untrap func()
	stderr io.Writer
	// keyFP and pseudo describe the release's user ids (describe).
	keyFP  string
	pseudo bool
	// dead says the store stopped answering: the run then ends without
	// further requests to it, leaving its leftovers to the next run.
	dead bool
	// pending reserves the key path (Plan.KeyOut) from Begin to Finish.
	pending *pendingKey
	// prev is the gate's previous report (nil: drift not checked, for
	// the reason in unchecked).
	prev      *smoothanonpb.RunReport
	unchecked string
}

// noteStore records a store that did not answer.
func (r *Run) noteStore(err error) {
	if errors.Is(err, storage.ErrTimeout) {
		r.dead = true
	}
}

func (r *Run) storeDead() bool { return r.dead }

// Begin checks the plan against the stores — the output, the report and
// the key path each distinct, outside the input, writable, and not
// holding anything the run may not replace; the quality gate's previous
// report readable if it exists — removes what dead runs left
// there, and makes a directory release's staging with its lease. From
// here until Finish, SIGINT and SIGTERM cancel Context instead of killing
// the process (a second one kills it).
//
// A directory output whose manifest already carries the plan's run id
// is a rerun: Begin returns an *AlreadyPublishedError and the run does
// nothing (it only saves a key that the publishing run left pending).
// Any other refusal is a *PlanError.
func Begin(ctx context.Context, p Plan, stderr io.Writer) (*Run, error) {
	if stderr == nil {
		stderr = io.Discard
	}
	r := &Run{plan: p, token: newToken(), stderr: stderr}
	if err := checkPlan(p); err != nil {
		return nil, &PlanError{err}
	}
	published, err := r.inspect(ctx)
	var ap *AlreadyPublishedError
	if errors.As(err, &ap) {
		r.recoverReport(ctx)
		r.sweep(ctx) // a dead run of this very night may have left its staging
	}
	// Whether or not this run goes on, a key its publisher left pending is
	// saved (a rerun of the night, or a refused retry of a single file).
	savedFor, removed, serr := sweepPending(ctx, p.KeyOut)
	switch {
	case serr != nil:
		r.note("pending keys: %v", serr)
	case savedFor != "":
		r.note("%s holds the key of the release published at %s, whose run died before finishing", p.KeyOut, savedFor)
	}
	if len(removed) > 0 {
		r.note("removed %d pending keys of dead runs that published nothing (%s%s)", len(removed), removed[0], more(len(removed)-1))
	}
	if err != nil && !p.Dir && !p.Overwrite && published != "" && sameOutput(savedFor, p.Output) {
		// The single file was published by an earlier run of this command
		// that died before saving its key: that run's retry is done.
		err = &AlreadyPublishedError{Output: p.Output}
	}
	if err != nil {
		return nil, err
	}
	for _, check := range []func() error{
		func() error { return r.readPrevious(ctx) },
		func() error { return checkReport(ctx, p) },
		func() error { return checkFeatureTable(ctx, p) },
		func() error { return checkKeyOut(p.KeyOut) },
		func() error { return r.probe(ctx) },
	} {
		if err := check(); err != nil {
			return nil, &PlanError{err}
		}
	}
	undoParents, err := r.makeParents()
	if err != nil {
		return nil, &PlanError{err}
	}
	if p.KeyOut != "" {
		if r.pending, err = reserveKey(p.KeyOut, r.token, p.Output, p.Dir); err != nil {
			undoParents()
			return nil, &PlanError{err}
		}
	}
	r.sweep(ctx)
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	if p.Dir {
		r.staging = stagingName(p.Output, p.RunID, r.token)
		l, err := takeLease(ctx, r.staging, p.RunID, r.token, r.cancel)
		if err != nil {
			storage.RemoveAll(context.WithoutCancel(ctx), r.staging)
			r.pending.discard()
			undoParents()
			r.cancel(nil)
			return nil, &PlanError{fmt.Errorf("--output %s: making the staging beside it: %w", p.Output, err)}
		}
		r.lease = l
	}
	r.untrap = TrapSignals(r.cancel)
	r.fault(StageBegun)
	return r, nil
}

// readPrevious reads the previous report, when the plan names one: the
// gate's drift and the report's Drift measure against it.
func (r *Run) readPrevious(ctx context.Context) error {
	if r.plan.Gate.Previous == "" {
		return nil
	}
	prev, unchecked, err := readPrevious(ctx, r.plan.Gate.Previous)
	if err != nil {
		return err
	}
	r.prev, r.unchecked = prev, unchecked
	if unchecked != "" {
		r.note("drift not checked: %s", unchecked)
	}
	return nil
}

// inspect reads what the output holds and checks that the run may
// publish there; it returns the fingerprint of the key of the release
// published there now ("" if none).
func (r *Run) inspect(ctx context.Context) (string, error) {
	p := r.plan
	if p.Dir {
		st, err := inspectDir(ctx, p.Output)
		if err != nil {
			return "", &PlanError{fmt.Errorf("--output %w", err)}
		}
		fp := ""
		if st.manifest != nil {
			fp = st.manifest.KeyFingerprint
		}
		if err := st.check(p); err != nil {
			var ap *AlreadyPublishedError
			if errors.As(err, &ap) {
				return fp, err
			}
			return fp, &PlanError{err}
		}
		return fp, nil
	}
	st, err := inspectFile(ctx, p.Output)
	if err != nil {
		return "", &PlanError{err}
	}
	if err := st.check(p); err != nil {
		return st.fingerprint, &PlanError{err}
	}
	return st.fingerprint, nil
}

// probe proves the outputs writable before any work, creating nothing
// that outlives it: locally, a file is created and removed in each
// output's parent or, when the parent does not exist yet, in its nearest
// existing ancestor; on a bucket the store must answer and take a write.
func (r *Run) probe(ctx context.Context) error {
	for flag, path := range r.outputs() {
		dir, base := storage.Split(path)
		if storage.IsLocal(path) {
			at, err := existingAncestor(dir)
			if err != nil {
				return fmt.Errorf("%s %s: %w", flag, path, err)
			}
			f, name, err := storage.CreateLocked(at, storage.TempPrefix(base))
			if err != nil {
				return fmt.Errorf("%s %s: cannot write there: %w", flag, path, err)
			}
			f.Close()
			os.Remove(name)
			continue
		}
		probe := storage.Join(dir, "."+base+".probe-"+r.token)
		if err := storage.Put(ctx, probe, nil, storage.Cond{}); err != nil {
			return fmt.Errorf("%s %s: cannot write there: %w", flag, path, err)
		}
		if err := storage.Remove(ctx, probe); err != nil {
			return fmt.Errorf("%s %s: %w", flag, path, err)
		}
	}
	return nil
}

// outputs maps each flag naming a file the run writes to its path.
func (r *Run) outputs() map[string]string {
	paths := map[string]string{"--output": r.plan.Output}
	if r.plan.Report != "" && r.plan.Report != "-" {
		paths["--metrics_out"] = r.plan.Report
	}
	if r.plan.KeyOut != "" {
		paths["--pseudonym_key_out"] = r.plan.KeyOut
	}
	if r.plan.FeatureTable != "" {
		paths["--feature_report"] = r.plan.FeatureTable
	}
	return paths
}

// existingAncestor returns dir, or its nearest ancestor that exists; it
// must be a directory.
func existingAncestor(dir string) (string, error) {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
			return p, nil
		case err == nil:
			return "", fmt.Errorf("%s is not a directory", p)
		case !errors.Is(err, os.ErrNotExist) || filepath.Dir(p) == p:
			return "", err
		}
	}
}

// makeParents creates the local parent directories of the run's outputs
// once every check has passed. It returns an undo that removes the
// directories it created, deepest first, for a run refused after it.
func (r *Run) makeParents() (undo func(), err error) {
	var made []string
	undo = func() {
		// Deepest first: a child's path is longer than its parent's.
		slices.SortFunc(made, func(a, b string) int { return len(b) - len(a) })
		for _, dir := range made {
			os.Remove(dir) // only if still empty
		}
	}
	for flag, path := range r.outputs() {
		if !storage.IsLocal(path) {
			continue
		}
		dir, _ := storage.Split(path)
		at, err := existingAncestor(dir)
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			undo()
			return nil, fmt.Errorf("%s %s: %w", flag, path, err)
		}
		for p := filepath.Clean(dir); p != at; p = filepath.Dir(p) {
			made = append(made, p)
		}
	}
	return undo, nil
}

// sweep removes the leftovers of dead runs at the run's outputs; what it
// cannot remove is noted and left.
func (r *Run) sweep(ctx context.Context) {
	var removed []string
	add := func(more []string, err error) {
		removed = append(removed, more...)
		if err != nil {
			r.note("leftovers of earlier runs: %v", err)
		}
	}
	if r.plan.Dir {
		add(sweepDir(ctx, r.plan.Output))
	} else if storage.IsLocal(r.plan.Output) {
		add(sweepTemps(r.plan.Output))
		add(sweepCreating(dirOf(r.plan.Output)))
	}
	for _, p := range []string{r.plan.Report, r.plan.FeatureTable} {
		if p != "" && p != "-" && storage.IsLocal(p) {
			add(sweepTemps(p))
			add(sweepCreating(dirOf(p)))
		}
	}
	if p := r.plan.KeyOut; p != "" {
		add(sweepCreating(dirOf(p)))
	}
	add(sweepSpools())
	if n := sweepNote(removed); n != "" {
		r.note("%s", n)
	}
}

// TrapSignals turns the first SIGINT or SIGTERM into cancel with an
// InterruptedError, and restores the default for the next one (a second
// signal ends the process at once); stop ends the trap. Every command
// that writes and must clean up on a signal traps them here.
func TrapSignals(cancel context.CancelCauseFunc) (stop func()) {
	sigs, done := make(chan os.Signal, 1), make(chan struct{})
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			signal.Reset(syscall.SIGINT, syscall.SIGTERM)
			cancel(&InterruptedError{Signal: s})
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
		})
	}
}

// Context is the run's context: cancelled by SIGINT or SIGTERM, or when a
// bucket staging's lease is lost.
func (r *Run) Context() context.Context { return r.ctx }

// Staging is the directory release's staging: the job writes its shards
// into StagedShards, their list into StagedShardList and its report into
// StagedReport. "" for a single-file release.
func (r *Run) Staging() string { return r.staging }

// Token is the run's token, new for every run.
func (r *Run) Token() string { return r.token }

// Outcome is what the work produced, handed to Finish.
type Outcome struct {
	// Report is the release's verdict and figures; nil when the work
	// stopped before it had one.
	Report *smoothanonpb.RunReport
	// Err is why the work stopped, if it did.
	Err error
	// Key is the release's pseudonym key; nil for kept ids. With
	// Plan.KeyOut it is saved once the release is published.
	Key *pseudonym.Key
	// Release is a single-file release's rows (Plan.Dir false); Finish
	// writes them ordered by user id, whatever their order here.
	Release *matrix.Matrix
	// Vocab names Release's features when the input's were names
	// (matrix.ReadStats.Vocab): the file holds the names. Optional;
	// default ids.
	Vocab *matrix.Vocab
	// FeatureTable is a single-file release's feature table, written to
	// Plan.FeatureTable once the release is published. A directory
	// release's job stages it at StagedFeatureTable instead. Required
	// with Plan.FeatureTable for a valid release.
	FeatureTable []byte
	// Sensitive is the sensitive rule a single-file release was made
	// under (sensitive.Record.String), recorded in its metadata.
	// Optional; default "" (no list).
	Sensitive string
}

// Finish ends the run. A valid release is published (Plan.Dir: the
// staged shards; else Outcome.Release), then its key saved, then its
// feature table (Plan.FeatureTable) written, then the report written with
// published true. Otherwise — an error, an invalid
// release, a signal, another run publishing first — nothing is
// published, no key saved, and the report (when asked for) says why.
// Either way the staging and its lease are gone when Finish returns.
//
// Errors: Outcome.Err as it is; ErrVerification (wrapped);
// *InterruptedError; *LostRaceError; anything else failed in publishing.
func (r *Run) Finish(o Outcome) (*smoothanonpb.RunReport, error) {
	ctx := context.WithoutCancel(r.ctx)
	defer r.end(ctx)
	rep := o.Report
	if rep == nil {
		rep = &smoothanonpb.RunReport{}
	}
	r.describe(rep, o.Key)
	var why error
	var intr *InterruptedError
	switch cause := context.Cause(r.ctx); {
	case errors.As(cause, &intr):
		why = cause // the work's own error is the interruption's echo
	case o.Err != nil:
		why = o.Err
	case cause != nil:
		why = r.stopped(cause)
	case o.Report == nil:
		why = errors.New("the work ended without a report")
	case !rep.Valid:
		why = fmt.Errorf("%w: nothing published", ErrVerification)
	}
	var missed []string
	if why == nil {
		missed = r.plan.Gate.missed(rep, r.prev)
	}
	r.plan.Gate.record(rep, r.prev, r.unchecked, missed)
	if r.prev != nil && o.Report != nil {
		rep.Drift = driftOf(rep, r.prev, r.plan.Gate.Previous)
		r.note("%s", driftLine(rep.Drift))
	}
	if len(missed) > 0 {
		why = &GateError{Missed: missed}
	}
	if why != nil {
		return rep, r.unpublished(ctx, rep, why)
	}
	r.fault(StageStaged)
	pending := r.pending
	if o.Key == nil {
		pending = nil
	}
	if pending != nil {
		if err := pending.hold(*o.Key); err != nil {
			return rep, r.unpublished(ctx, rep, err)
		}
	}
	table, err := r.featureTable(ctx, o)
	if err != nil {
		pending.discard()
		return rep, r.unpublished(ctx, rep, err)
	}
	rep.Published = true
	b, err := EncodeReport(rep)
	if err != nil {
		pending.discard()
		return rep, r.unpublished(ctx, rep, err)
	}
	sum := sha256.Sum256(b)
	if r.plan.Dir {
		var shards []storage.Shard
		if shards, err = stagedShards(ctx, r.staging, rep.Rows, r.plan.long()); err == nil {
			err = storage.WriteFile(ctx, storage.Join(r.staging, heldReport), b)
		}
		if err == nil {
			_, err = r.publishDir(r.ctx, shards, hex.EncodeToString(sum[:]))
		}
	} else if o.Release == nil {
		err = errors.New("no release rows to publish")
	} else {
		err = r.publishFile(r.ctx, o.Release, o.Vocab, FileMetadata(o.Key, o.Sensitive))
	}
	if err != nil {
		r.noteStore(err)
		pending.discard()
		rep.Published = false
		if errors.As(context.Cause(r.ctx), &intr) && !errors.As(err, new(*LostRaceError)) {
			err = intr // what failed, failed because the run was stopped
		}
		return rep, r.unpublished(ctx, rep, err)
	}
	r.fault(StageClaimed)
	var errs []error
	if pending != nil {
		if err := pending.save(*o.Key); err != nil {
			errs = append(errs, fmt.Errorf("published %s, but the key was not saved: %w", r.plan.Output, err))
		}
	}
	r.fault(StageSaved)
	if table != nil {
		if err := storage.WriteFile(ctx, r.plan.FeatureTable, table); err != nil {
			errs = append(errs, fmt.Errorf("published %s, but --feature_report %w", r.plan.Output, err))
		}
	}
	r.fault(StageTable)
	if err := writeReport(ctx, r.plan.Report, b, r.plan.Stdout); err != nil {
		errs = append(errs, fmt.Errorf("published %s, but %w", r.plan.Output, err))
	}
	if len(errs) > 0 {
		return rep, &OutputError{errors.Join(errs...)}
	}
	return rep, nil
}

// Abandon ends a run that had nothing to publish and nothing to report
// (a runner that only translated the job): the staging and its lease go,
// nothing is written.
func (r *Run) Abandon() { r.end(context.WithoutCancel(r.ctx)) }

// unpublished records in rep why nothing was published, writes the
// report, and returns why (joined with a failure to write the report).
func (r *Run) unpublished(ctx context.Context, rep *smoothanonpb.RunReport, why error) error {
	rep.Published = false
	rep.NotPublished = oneLine(why.Error())
	b, err := EncodeReport(rep)
	if err == nil {
		err = writeReport(ctx, r.plan.Report, b, r.plan.Stdout)
	}
	if err != nil {
		return errors.Join(why, err)
	}
	return why
}

// describe fills the report fields the lifecycle owns.
func (r *Run) describe(rep *smoothanonpb.RunReport, key *pseudonym.Key) {
	rep.Output, rep.Date = r.plan.Output, r.plan.Date
	if r.plan.Dir {
		rep.RunId = r.plan.RunID
	}
	rep.UserIds = pseudonym.Keep.String()
	rep.KeyFingerprint, rep.LinkageWarning = "", KeepWarning
	if key != nil {
		rep.UserIds, rep.KeyFingerprint, rep.LinkageWarning = pseudonym.Pseudonymize.String(), key.Fingerprint(), ""
	}
	r.keyFP, r.pseudo = rep.KeyFingerprint, key != nil
}

// end removes the staging and the pending key file, drops the lease and
// the signal trap.
func (r *Run) end(ctx context.Context) {
	r.pending.discard()
	if r.untrap != nil {
		r.untrap()
	}
	r.lease.release()
	if r.staging != "" && r.dead {
		r.note("the store does not answer: the staging %s is left for the next run to remove", r.staging)
	} else if r.staging != "" {
		if err := storage.RemoveAll(ctx, r.staging); err != nil {
			r.note("the staging %s could not be removed (the next run removes it): %v", r.staging, err)
		}
	}
	r.cancel(nil)
}

// stopped turns a cancellation of the run's context into its cause.
func (r *Run) stopped(err error) error {
	if cause := context.Cause(r.ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

func (r *Run) fault(s Stage) {
	if Fault != nil {
		Fault(s)
	}
}

// note prints a line about the run on stderr.
func (r *Run) note(format string, args ...any) {
	fmt.Fprintf(r.stderr, "smoothanon: "+format+"\n", args...)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// KeepWarning is the report's linkage warning for kept user ids.
const KeepWarning = "user ids kept: releases of the same population can be joined by id and a user's classes intersected, " +
	"so a series of releases is not protected (see docs/privacy.md); use --user_ids pseudonym"

// FileMetadata is the Parquet key/value metadata of every release file:
// the release marker, the user id mode, for pseudonyms the key's
// fingerprint, and the sensitive record (sensitive.Record.String; ""
// for a release made without a list).
func FileMetadata(key *pseudonym.Key, sensitive string) map[string]string {
	md := map[string]string{matrix.MetaRelease: matrix.ReleaseFormat, pseudonym.MetadataKey: pseudonym.Keep.String()}
	if sensitive != "" {
		md[matrix.MetaSensitive] = sensitive
	}
	if key != nil {
		md[pseudonym.MetadataKey] = pseudonym.Pseudonymize.String()
		md[matrix.MetaKeyFingerprint] = key.Fingerprint()
	}
	return md
}

func (r *Run) userIDs() string {
	if r.pseudo {
		return pseudonym.Pseudonymize.String()
	}
	return pseudonym.Keep.String()
}

func (r *Run) fingerprint() string { return r.keyFP }

// TempDirPrefix names the temp directories MakeTempDir makes.
const TempDirPrefix = "smoothanon-run-"

// MakeTempDir makes a temp directory of the process's own for a run, held
// by a lock file inside, and returns it with its removal. A run points
// TMPDIR at it, so that what libraries leave in the temp directory (Beam's
// loopback runner leaves a file per job) goes when the run ends; the
// directories of dead runs are removed by the next run's sweep.
func MakeTempDir() (string, func(), error) {
	parent := os.TempDir()
	tmp, err := os.MkdirTemp(parent, "."+TempDirPrefix+"new-*")
	if err != nil {
		return "", nil, err
	}
	lock, err := storage.LockFile(filepath.Join(tmp, leaseName), nil)
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	dir := filepath.Join(parent, TempDirPrefix+strings.TrimPrefix(filepath.Base(tmp), "."+TempDirPrefix+"new-"))
	if err := os.Rename(tmp, dir); err != nil {
		lock.Release()
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return dir, func() { lock.Release(); os.RemoveAll(dir) }, nil
}

// DescribeInput is the report's account of how an input was read.
func DescribeInput(st matrix.ReadStats) *smoothanonpb.InputInfo {
	info := &smoothanonpb.InputInfo{Shape: st.Layout.Shape.String(), UserColumn: st.Layout.User, FeatureColumn: st.Layout.Feature,
		Pairs: st.Pairs, RepeatedPairs: st.DroppedPairs, FeatureValues: st.Layout.Values.String()}
	if st.Vocab != nil {
		info.Names = int64(st.Vocab.Len())
	}
	return info
}
