package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
)

// PublishParams configure Publish.
type PublishParams struct {
	// Staged is the directory holding the finished shards (*.parquet), on
	// the same store as Output. Required.
	Staged string
	// Output is the release directory. Required.
	Output string
	// RunID names the run; it goes into the manifest. Required.
	RunID string
	// Overwrite allows replacing another run's release or a non-empty
	// Output. Optional; default false.
	Overwrite bool
	// ReportSHA256 is the hex SHA-256 of the run report. Optional.
	ReportSHA256 string
}

func checkPublishParams(p PublishParams) error {
	switch {
	case p.Staged == "":
		return errors.New("publish: no staged directory")
	case p.Output == "":
		return errors.New("publish: no output directory")
	case p.RunID == "":
		return errors.New("publish: no run id")
	case storage.Clean(p.Staged) == storage.Clean(p.Output):
		return fmt.Errorf("publish: staged and output are both %s", p.Output)
	case storage.Scheme(p.Staged) != storage.Scheme(p.Output):
		return fmt.Errorf("publish: staged %s and output %s on different stores", p.Staged, p.Output)
	}
	return nil
}

// Publish moves the staged shards to Output and writes the manifest last.
// It returns the manifest and whether Output already held this run's
// release (then nothing was written). On a local disk the staged
// directory is renamed into place; on an object store the shards are
// copied server-side, objects of a replaced release removed, and the
// staged objects left for the caller to delete with the staging prefix.
func Publish(ctx context.Context, p PublishParams) (m *storage.Manifest, already bool, err error) {
	if err := checkPublishParams(p); err != nil {
		return nil, false, err
	}
	st, err := Inspect(ctx, p.Output)
	if err != nil {
		return nil, false, err
	}
	if st.Manifest != nil && st.Manifest.RunID == p.RunID {
		return st.Manifest, true, nil
	}
	m, err = manifest(ctx, p)
	if err != nil {
		return nil, false, err
	}
	var names []string
	for _, s := range m.Shards {
		names = append(names, s.Name)
	}
	if err := st.check(p.Output, p.RunID, p.Overwrite, names); err != nil {
		return nil, false, err
	}
	if storage.IsLocal(p.Output) {
		// The manifest goes into the staged directory first, so one rename
		// publishes the shards and their manifest together.
		if err := storage.WriteManifest(ctx, p.Staged, m); err != nil {
			return nil, false, err
		}
		return m, false, renameDir(p.Staged, p.Output, p.RunID, st)
	}
	if err := copyObjects(ctx, p.Staged, p.Output, names, st); err != nil {
		return nil, false, err
	}
	return m, false, storage.WriteManifest(ctx, p.Output, m)
}

// manifest describes the staged shards: names, sizes and rows (from the
// Parquet footers).
func manifest(ctx context.Context, p PublishParams) (*storage.Manifest, error) {
	files, err := storage.List(ctx, storage.Join(p.Staged, "*.parquet"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("publish: %s holds no shards", p.Staged)
	}
	m := &storage.Manifest{Version: storage.ManifestVersion, RunID: p.RunID, ReportSHA256: p.ReportSHA256}
	for _, f := range files {
		pf, err := matrix.OpenFile(f)
		if err != nil {
			return nil, err
		}
		s := storage.Shard{Size: pf.Size(), Rows: pf.NumRows()}
		pf.Close()
		_, s.Name = storage.Split(f)
		m.Shards = append(m.Shards, s)
		m.TotalRows += s.Rows
	}
	return m, nil
}

// renameDir moves staged (shards and manifest) to output with one rename.
// An existing output (a release being replaced, or an empty directory) is
// first renamed to a sibling of output, outside the staging directory the
// launcher deletes, put back if the new release cannot be moved in, and
// removed only once the new release is in place.
func renameDir(staged, output, runID string, st State) error {
	var old string
	if st.Exists {
		old = output + ".replaced-" + runID
		if err := os.Rename(output, old); err != nil {
			return err
		}
	}
	if err := os.Rename(staged, output); err != nil {
		if old != "" {
			if rerr := os.Rename(old, output); rerr != nil {
				return fmt.Errorf("%w; the replaced release is at %s (restoring it: %v)", err, old, rerr)
			}
		}
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// copyObjects copies the staged shards to output server-side. The
// manifest of a replaced release goes first, so the prefix is never read
// as a release while it mixes old and new shards; old objects that are
// not among the new shards go last.
func copyObjects(ctx context.Context, staged, output string, names []string, st State) error {
	if st.Manifest != nil {
		if err := storage.Remove(ctx, storage.Join(output, storage.SuccessName)); err != nil {
			return err
		}
	}
	for _, n := range names {
		if err := storage.Copy(ctx, storage.Join(staged, n), storage.Join(output, n)); err != nil {
			return err
		}
	}
	for _, f := range st.Files {
		if _, base := storage.Split(f); !slices.Contains(names, base) {
			if err := storage.Remove(ctx, f); err != nil {
				return err
			}
		}
	}
	return nil
}
