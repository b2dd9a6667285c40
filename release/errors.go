package release

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrVerification marks a release that failed verification: nothing was
// published.
var ErrVerification = errors.New("release failed verification")

// AlreadyPublishedError is a run whose run id the output's manifest
// already carries: the night is published, the run does nothing. For a
// single-file release (RunID ""), the file was published by an earlier
// run with the same key path that died before saving its key, which this
// run saved.
type AlreadyPublishedError struct{ Output, RunID string }

func (e *AlreadyPublishedError) Error() string {
	if e.RunID == "" {
		return fmt.Sprintf("%s already holds the release of an earlier run of this command, which died before finishing (its key is saved); nothing to do", e.Output)
	}
	return fmt.Sprintf("%s already holds the release of run %s; nothing to do", e.Output, e.RunID)
}

// LostRaceError is a run that had its release ready when another run
// published into the same output first: this run published nothing,
// saved no key, and removed what it had copied.
type LostRaceError struct {
	Output string
	// Winner is the run id now published at Output ("" if the winner's
	// manifest could not be read, or for a single-file release).
	Winner string
}

func (e *LostRaceError) Error() string {
	if e.Winner == "" {
		return fmt.Sprintf("another run published %s first; this run published nothing", e.Output)
	}
	return fmt.Sprintf("run %s published %s first; this run published nothing", e.Winner, e.Output)
}

// InterruptedError is a run stopped by a signal before it published: its
// staging was removed and no key saved.
type InterruptedError struct{ Signal os.Signal }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted by %v: nothing published", e.Signal)
}

// ExitCode is the conventional code of a process ended by the signal,
// 128 + its number.
func (e *InterruptedError) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// errLeaseLost stops a run whose staging lease another run broke (the
// run was stalled past the lease's expiry): its staging may be gone.
var errLeaseLost = errors.New("the staging lease expired and was taken over: this run's staging may have been removed")

// OutputError is an output that could not be written after the release
// was published (the key or the report): the release stands.
type OutputError struct{ Err error }

func (e *OutputError) Error() string { return e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }
