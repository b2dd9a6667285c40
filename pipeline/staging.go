package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/transforms"
)

// outputPath is the release directory as workers will see it: an absolute
// local path (its parent created), or the URI without a trailing slash.
func outputPath(out string) (string, error) {
	if !storage.IsLocal(out) {
		out = storage.Clean(out)
		if _, base := storage.Split(out); base == "" || storage.Scheme(out)+"://"+base == out {
			return "", fmt.Errorf("output %s: name a directory inside the bucket, not the bucket itself", out)
		}
		return out, nil
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	return abs, os.MkdirAll(filepath.Dir(abs), 0o755)
}

// absPath makes a local input path absolute; URIs are kept.
func absPath(p string) (string, error) {
	if !storage.IsLocal(p) {
		return p, nil
	}
	return filepath.Abs(p)
}

// makeStaging returns a fresh staging directory beside out, on the same
// store (so publishing it is a rename or a server-side copy), after
// proving that the launcher may write there: a missing bucket, missing
// credentials or a refused write fail here, naming the URI, before a job
// is submitted.
func makeStaging(ctx context.Context, out, runID string) (string, error) {
	dir, base := storage.Split(out)
	staging := storage.Join(dir, "."+base+".staging-"+runID+"-"+randomID())
	if err := storage.MkdirAll(transforms.StagingRelease(staging)); err != nil {
		return "", err
	}
	probe := storage.Join(staging, "launcher-probe")
	if err := storage.WriteFile(ctx, probe, nil); err != nil {
		storage.RemoveAll(ctx, staging)
		return "", err
	}
	if err := storage.Remove(ctx, probe); err != nil && !errors.Is(err, storage.ErrNotExist) {
		return "", err
	}
	return staging, nil
}
