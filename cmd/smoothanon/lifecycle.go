package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/storage"
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
	case errors.Is(err, release.ErrVerification):
		return &exitError{code: 1, err: err}
	case errors.As(err, &epe):
		return &exitError{code: 3, err: err}
	case errors.As(err, &pe), errors.As(err, &ie), errors.As(err, &se), errors.As(err, &fe), errors.As(err, &ke), errors.As(err, &oe):
		return &exitError{code: 2, err: err}
	}
	return &exitError{code: fallback, err: err}
}

// singleFile runs work as the lifecycle of a single-file release (solve,
// baseline): release.Begin on plan, work with the run's context, then
// release.Finish with what work returns. work's error is the Outcome's.
// A retry of a run that published and died before saving its key only
// saves the key: it returns (nil, nil) after saying so on stderr.
func singleFile(plan release.Plan, stderr io.Writer, work func(ctx context.Context) (release.Outcome, error)) (*smoothanonpb.RunReport, error) {
	lc, err := release.Begin(context.Background(), plan, stderr)
	var ap *release.AlreadyPublishedError
	if errors.As(err, &ap) {
		fmt.Fprintf(stderr, "smoothanon: %v\n", ap)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o, err := work(lc.Context())
	if err != nil && o.Err == nil {
		o.Err = err
	}
	return lc.Finish(o)
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

// since formats seconds since start for summaries.
func since(start time.Time) float64 { return time.Since(start).Seconds() }

// setStoreTimeout sets how long an object store may take to answer.
func setStoreTimeout(d time.Duration) {
	if d > 0 {
		storage.SetTimeout(d)
	}
}
