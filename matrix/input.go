package matrix

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/smoothanon/smoothanon/storage"
)

// ErrReleaseInput marks the refusal of a release where an input is
// expected (ListFiles, OpenInput): anonymizing a release again as if it
// were data would count each of its users once more.
var ErrReleaseInput = errors.New("a release is never read as input")

// refusal is a cause with its own words that matches a sentinel error.
type refusal struct {
	kind error
	msg  string
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.kind }

// notInput is the error refusing path as an input because it is, or is
// part of, a release; what says how.
func notInput(path, what string) error {
	return &FileError{Path: path, Row: -1, Err: &refusal{ErrReleaseInput, what + "; " + ErrReleaseInput.Error()}}
}

// ListFiles expands an input spec into a sorted list of Parquet files. The
// spec is a file, a directory (its *.parquet files), a glob, or several of
// these separated by commas; each may be local or a gs://, s3:// or memfs://
// URI (see storage.Expand). It is an error for the spec to match nothing.
//
// No input is part of a release: a directory holding a _SUCCESS manifest,
// and any file in such a directory (a glob or list naming a release's
// shards), are refused with an error matching ErrReleaseInput; so is a
// directory of shards (storage.IsShardName) without _SUCCESS, an
// interrupted publish (storage.ErrNotRelease). An empty _SUCCESS is
// Hadoop's and Spark's marker of a finished job, never a release's
// manifest: it does not make a directory a release. Single-file releases
// carry the metadata MetaRelease, which OpenInput refuses. A local path
// that is not a regular file or a directory (a named pipe, socket or
// device) is refused too.
func ListFiles(spec string) ([]string, error) {
	ctx := context.Background()
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" || storage.HasGlob(part) {
			continue
		}
		// A probe that fails leaves the part to Expand, which names the
		// cause (a missing bucket, say) on the part itself.
		if rel, err := holdsRelease(ctx, part); err == nil && rel {
			return nil, notInput(part, "is a published release (it holds "+storage.SuccessName+")")
		}
	}
	files, err := storage.Expand(ctx, spec, ".parquet")
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	for _, f := range files {
		dir, _ := storage.Split(f)
		rel, seen := dirs[dir]
		if !seen {
			if rel, err = holdsRelease(ctx, dir); err != nil {
				return nil, err
			}
			dirs[dir] = rel
		}
		if rel {
			return nil, notInput(f, fmt.Sprintf("is a shard of the published release %s (it holds %s)", dir, storage.SuccessName))
		}
	}
	return files, nil
}

// holdsRelease reports whether dir holds a non-empty _SUCCESS, the
// manifest of a published release. A dir that is a file holds nothing.
func holdsRelease(ctx context.Context, dir string) (bool, error) {
	a, err := storage.Stat(ctx, storage.Join(dir, storage.SuccessName))
	switch {
	case err == nil:
		return a.Size > 0, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return false, nil
	}
	return false, err
}

// OpenInput opens path with OpenFile for reading as input: a file that
// carries the release marker MetaRelease is refused with an error matching
// ErrReleaseInput.
func OpenInput(path string) (*File, error) { return OpenInputAs(path, Layout{}) }

// OpenInputAs is OpenInput with the layout l (OpenFileAs).
func OpenInputAs(path string, l Layout) (*File, error) {
	f, err := OpenFileAs(path, l)
	if err != nil {
		return nil, err
	}
	if f.IsRelease() {
		f.Close()
		return nil, notInput(path, fmt.Sprintf("is a release (Parquet metadata %s)", MetaRelease))
	}
	return f, nil
}

// IsRelease reports whether the file carries the release marker
// MetaRelease in its key/value metadata: a release's file (a shard of a
// directory release, or a single-file release).
func (pf *File) IsRelease() bool {
	_, ok := pf.Metadata(MetaRelease)
	return ok
}

// KeyFingerprint is the pseudonym key's fingerprint the file carries
// (MetaKeyFingerprint); "" if none.
func (pf *File) KeyFingerprint() string {
	v, _ := pf.Metadata(MetaKeyFingerprint)
	return v
}
