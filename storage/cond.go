package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Cond is a precondition on a write; the zero Cond always holds.
type Cond struct {
	// IfAbsent writes only if nothing exists under the name: GCS
	// ifGenerationMatch=0, S3 If-None-Match: *, on a local disk a check
	// and a rename under an exclusive lock on the directory.
	IfAbsent bool
	// IfVersion writes only if the name still holds this Attrs.Version:
	// GCS ifGenerationMatch, S3 If-Match, on a local disk a check under the
	// directory's lock.
	IfVersion string
}

func (c Cond) check() error {
	if c.IfAbsent && c.IfVersion != "" {
		return errors.New("a write cannot require both absence and a version")
	}
	return nil
}

// ErrConflict is a precondition that did not hold: the name exists
// (IfAbsent) or holds another version (IfVersion). The write did nothing.
var ErrConflict = errors.New("written by someone else in the meantime")

// Put writes data to uri atomically if c holds; otherwise it writes
// nothing and returns an error matching ErrConflict.
func Put(ctx context.Context, uri string, data []byte, c Cond) error {
	w, err := Create(ctx, uri)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return err
	}
	return w.Commit(c)
}

// commitLocal renames the finished temporary file tmp to path if c holds.
// Conditional commits into one directory exclude each other with an
// exclusive flock on the directory, so a check and its rename are atomic
// with respect to every other conditional write there.
func commitLocal(tmp, path string, c Cond) error {
	if c == (Cond{}) {
		return os.Rename(tmp, path)
	}
	unlock, err := LockDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer unlock()
	st, err := os.Lstat(path)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	case c.IfAbsent && err == nil:
		return ErrConflict
	case c.IfVersion != "" && (err != nil || localAttrs(st).Version != c.IfVersion):
		return ErrConflict
	}
	return os.Rename(tmp, path)
}

// LockDir takes an exclusive flock on a local directory and returns its
// release. The lock is the kernel's: a process that dies drops it.
func LockDir(dir string) (func(), error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return func() { unix.Close(fd) }, nil
}

// contentVersion is the Version of a store that keeps none (memfs): a
// hash of the content.
func contentVersion(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:16])
}

// commitOther writes data to uri on a store without conditional writes
// (memfs, in one process: tests) after checking c.
func commitOther(ctx context.Context, uri string, data []byte, c Cond) error {
	if c != (Cond{}) {
		b, err := ReadFile(ctx, uri)
		exists := err == nil
		if err != nil && !errors.Is(err, ErrNotExist) && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if c.IfAbsent && exists || c.IfVersion != "" && (!exists || contentVersion(b) != c.IfVersion) {
			return ErrConflict
		}
	}
	return nil
}
