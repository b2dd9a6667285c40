package matrix

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"github.com/smoothanon/smoothanon/storage"
)

// refusal is a cause with its own words that matches a sentinel error.
type refusal struct {
	kind error
	msg  string
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.kind }

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

// KeyFingerprint is the pseudonym key's fingerprint the file carries
// (MetaKeyFingerprint); "" if none.
func (pf *File) KeyFingerprint() string {
	v, _ := pf.Metadata(MetaKeyFingerprint)
	return v
}
