package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/smoothanon/smoothanon/storage"
)

// State is what an output directory holds before a publish.
type State struct {
	// Manifest is the published release's manifest; nil if none.
	Manifest *storage.Manifest
	// Files are the files or objects under the directory, _SUCCESS
	// included; a local directory's entries.
	Files []string
	// Exists says a local path exists (a file or a directory); an object
	// store prefix exists when Files is not empty.
	Exists, IsDir bool
}

// Inspect reads the state of the output directory dir.
func Inspect(ctx context.Context, dir string) (State, error) {
	var st State
	m, err := storage.ReadManifest(ctx, dir)
	switch {
	case err == nil:
		st.Manifest = m
	case !errors.Is(err, storage.ErrNotRelease):
		return st, err
	}
	if !storage.IsLocal(dir) {
		st.Files, err = storage.ListTree(ctx, dir)
		st.Exists, st.IsDir = len(st.Files) > 0, true
		return st, err
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.Exists, st.IsDir = true, fi.IsDir()
	if !st.IsDir {
		return st, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return st, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil && err != io.EOF {
		return st, err
	}
	for _, n := range names {
		st.Files = append(st.Files, storage.Join(dir, n))
	}
	return st, nil
}

// Empty reports whether the output holds nothing (or does not exist).
func (s State) Empty() bool { return s.IsDir && len(s.Files) == 0 || !s.Exists }

// ErrPublished is returned (wrapped) by CheckOutput when the output
// already holds the release of the same run id.
var ErrPublished = errors.New("already published")

// CheckOutput says whether a run may publish into dir: nil when dir is
// empty or missing, or holds a release and overwrite is set; an error
// matching ErrPublished when dir holds the release of runID (a retry,
// nothing to do); an error naming dir otherwise.
func CheckOutput(ctx context.Context, dir, runID string, overwrite bool) error {
	st, err := Inspect(ctx, dir)
	if err != nil {
		return err
	}
	return st.check(dir, runID, overwrite, nil)
}

// check is CheckOutput on a known state; files named in own (the shards
// of this run) do not count as a conflict, so a publish interrupted while
// copying can be retried.
func (s State) check(dir, runID string, overwrite bool, own []string) error {
	if m := s.Manifest; m != nil {
		if m.RunID == runID {
			return fmt.Errorf("%s: %w by run %s", dir, ErrPublished, runID)
		}
		if !overwrite {
			return fmt.Errorf("output %s holds the release of run %s (pass --overwrite to replace it)", dir, m.RunID)
		}
		return nil
	}
	if s.Empty() || overwrite {
		return nil
	}
	for _, f := range s.Files {
		if _, base := storage.Split(f); !slices.Contains(own, base) {
			return fmt.Errorf("output %s exists and is not empty (pass --overwrite to replace it)", dir)
		}
	}
	if !s.IsDir {
		return fmt.Errorf("output %s exists and is not empty (pass --overwrite to replace it)", dir)
	}
	return nil
}
