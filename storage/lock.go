package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// flockNB takes an exclusive flock on f without waiting. The lock lives
// as long as f is open in this process: the kernel drops it when the
// process dies, whatever killed it.
func flockNB(f *os.File) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	return nil
}

// Lock is an exclusive flock held on a local file.
type Lock struct{ f *os.File }

// LockFile creates the local file path (it must not exist), writes data
// into it and holds an exclusive flock on it until Release or the
// process's end. Where the file system allows (lockedTemp), the file
// appears at path already locked and holding data.
func LockFile(path string, data []byte) (*Lock, error) {
	fail := func(f *os.File, op string, err error) (*Lock, error) {
		f.Close()
		os.Remove(path)
		return nil, &os.PathError{Op: op, Path: path, Err: err}
	}
	if fd, err := lockedTemp(filepath.Dir(path)); err == nil {
		f := os.NewFile(uintptr(fd), path)
		if _, err := f.Write(data); err != nil {
			f.Close()
			return nil, &os.PathError{Op: "write", Path: path, Err: err}
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, &os.PathError{Op: "sync", Path: path, Err: err}
		}
		if err := linkTemp(fd, path); err != nil {
			f.Close()
			return nil, err
		}
		return &Lock{f: f}, nil
	} else if !errors.Is(err, errNoTmpfile) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flockNB(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		return fail(f, "write", err)
	}
	if err := f.Sync(); err != nil {
		return fail(f, "sync", err)
	}
	return &Lock{f: f}, nil
}

// errNoTmpfile says lockedTemp cannot be used in a directory: its file
// system has no O_TMPFILE, or /proc is not mounted.
var errNoTmpfile = errors.New("no O_TMPFILE")

// lockedTemp opens a new file without a name (O_TMPFILE) in the local
// directory dir and takes an exclusive flock on it; linkTemp then gives
// it a name. A file made this way never exists under a name unlocked, so
// a sweep can never take a live run's file for a dead one's, and a
// process killed before the link leaves nothing.
func lockedTemp(dir string) (int, error) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return -1, errNoTmpfile
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL):
		return -1, errNoTmpfile
	case err != nil:
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return fd, nil
}

// linkTemp names the file lockedTemp made path; path must not exist.
func linkTemp(fd int, path string) error {
	proc := fmt.Sprintf("/proc/self/fd/%d", fd)
	if err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.PathError{Op: "link", Path: path, Err: err}
	}
	return nil
}

// Release drops the lock; the file stays.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// IsLive reports whether some process holds a flock on the local file
// path (a Lock, or a Writer's temporary being written). A missing file is
// not live; anything but a regular file is an error (never opened in a
// way that could block). The probe takes and drops a shared lock, so it never blocks
// and never stops the holder from going on.
func IsLive(path string) (bool, error) {
	f, _, err := OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	}
	return false, fmt.Errorf("%s: %w", path, err)
}

// newInfix marks a file that CreateLocked has made but not yet locked
// and named; no sweep ever matches it.
const newInfix = ".new-"

// IsCreating reports whether base is the name of a file CreateLocked is
// making (it lives for the moment between its creation and its rename).
func IsCreating(base string) bool { return strings.HasPrefix(base, newInfix) }

// CreateLocked creates a new file named prefix + a random suffix in the
// local directory dir and returns it open for writing, with its name.
// The file appears under that name only once it holds an exclusive flock
// (made unnamed and linked, lockedTemp; where the file system cannot, it
// is created under another name, locked, then renamed), so a sweep that
// finds a file of that prefix unlocked knows its writer is gone.
func CreateLocked(dir, prefix string) (*os.File, string, error) {
	if dir == "" {
		dir = "."
	}
	if fd, err := lockedTemp(dir); err == nil {
		for range 100 {
			name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
			err := linkTemp(fd, name)
			if err == nil {
				return os.NewFile(uintptr(fd), name), name, nil
			}
			if !errors.Is(err, os.ErrExist) {
				unix.Close(fd)
				return nil, "", err
			}
		}
		unix.Close(fd)
		return nil, "", &os.PathError{Op: "createlocked", Path: filepath.Join(dir, prefix+"*"), Err: os.ErrExist}
	} else if !errors.Is(err, errNoTmpfile) {
		return nil, "", err
	}
	f, err := os.CreateTemp(dir, newInfix+"*")
	if err != nil {
		return nil, "", err
	}
	if err := flockNB(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, "", err
	}
	_, suffix, _ := strings.Cut(filepath.Base(f.Name()), newInfix)
	name := filepath.Join(dir, prefix+suffix)
	if err := os.Rename(f.Name(), name); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, "", err
	}
	return f, name, nil
}

// Rewrite replaces the content of the locked file with data, synced; the
// lock is kept.
func (l *Lock) Rewrite(data []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	if _, err := l.f.WriteAt(data, 0); err != nil {
		return err
	}
	return l.f.Sync()
}
