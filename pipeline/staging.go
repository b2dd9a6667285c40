package pipeline

import (
	"fmt"
	"path/filepath"

	"github.com/smoothanon/smoothanon/storage"
)

// outputPath is the release directory as workers will see it: an absolute
// local path, or the URI without a trailing slash.
func outputPath(out string) (string, error) {
	if !storage.IsLocal(out) {
		out = storage.Clean(out)
		if _, base := storage.Split(out); base == "" || storage.Scheme(out)+"://"+base == out {
			return "", fmt.Errorf("output %s: name a directory inside the bucket, not the bucket itself", out)
		}
		return out, nil
	}
	return filepath.Abs(out)
}

// absPath makes a local input path absolute; URIs are kept.
func absPath(p string) (string, error) {
	if !storage.IsLocal(p) {
		return p, nil
	}
	return filepath.Abs(p)
}
