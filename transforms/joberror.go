package transforms

import (
	"errors"
	"strings"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
)

// JobErrorMarker starts the message of a job error caused by the input or
// by a store (a bad row, an unreadable file, a refused write): the runner
// carries the worker's error text back to the launcher inside its own,
// many lines long, and the launcher finds the one line after the marker
// (JobInputError) to report it as bad input (exit code 2) instead of a
// failed runner.
const JobErrorMarker = "smoothanon input or storage error: "

// markJobError marks err when it is about a file, a row or a store:
// matrix.FileError or storage.Error. Other errors pass unchanged.
func markJobError(err error) error {
	var fe *matrix.FileError
	var se *storage.Error
	if err == nil || !errors.As(err, &fe) && !errors.As(err, &se) {
		return err
	}
	return &jobError{err}
}

type jobError struct{ err error }

func (e *jobError) Error() string {
	return JobErrorMarker + strings.Join(strings.Fields(e.err.Error()), " ")
}
func (e *jobError) Unwrap() error { return e.err }

// JobInputError returns the one-line input or storage error a failed job
// reports in its error text (see JobErrorMarker), if any.
func JobInputError(jobErr error) (string, bool) {
	if jobErr == nil {
		return "", false
	}
	_, rest, ok := strings.Cut(jobErr.Error(), JobErrorMarker)
	if !ok {
		return "", false
	}
	line, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(line), true
}
