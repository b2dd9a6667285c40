package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Attrs describe one stored file or object.
type Attrs struct {
	// Size is the length in bytes.
	Size int64
	// Version identifies this content of the name: a GCS generation, an
	// S3 ETag, or on a local disk the device, inode, size and modification
	// time (a rename over the name gives a new inode). Cond.IfVersion
	// compares it; it has no other meaning.
	Version string
	// CRC32C is the Castagnoli CRC-32 of the content when the store keeps
	// one (HasCRC32C): GCS always, S3 for objects uploaded with one, a
	// local disk never.
	CRC32C    uint32
	HasCRC32C bool
	// Updated is when the content was written, by the store's clock.
	Updated time.Time
}

// Stat returns the attributes of a file or object; a missing one is an
// error matching ErrNotExist. A local path must be a regular file.
func Stat(ctx context.Context, uri string) (Attrs, error) {
	ctx = beginOp(ctx)
	switch Scheme(uri) {
	case SchemeLocal:
		st, err := os.Stat(uri)
		if err != nil {
			return Attrs{}, err
		}
		if !st.Mode().IsRegular() {
			return Attrs{}, &os.PathError{Op: "stat", Path: uri, Err: errNotRegular(st.Mode())}
		}
		return localAttrs(st), nil
	case SchemeGCS:
		return statGCS(ctx, uri)
	case SchemeS3:
		return statS3(ctx, uri)
	}
	b, err := ReadFile(ctx, uri)
	if err != nil {
		return Attrs{}, err
	}
	return Attrs{Size: int64(len(b)), Version: contentVersion(b)}, nil
}

// localAttrs are the Attrs of a local file.
func localAttrs(st os.FileInfo) Attrs {
	a := Attrs{Size: st.Size(), Updated: st.ModTime()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		a.Version = fmt.Sprintf("%d:%d:%d:%d", sys.Dev, sys.Ino, st.Size(), st.ModTime().UnixNano())
	}
	return a
}

// errNotRegular names what a local path is when a regular file was
// expected: a FIFO or a device would block or never end.
func errNotRegular(m os.FileMode) error {
	switch {
	case m.IsDir():
		return errors.New("is a directory")
	case m&os.ModeNamedPipe != 0:
		return errors.New("is a named pipe, not a regular file")
	case m&os.ModeSocket != 0:
		return errors.New("is a socket, not a regular file")
	case m&os.ModeDevice != 0:
		return errors.New("is a device, not a regular file")
	}
	return fmt.Errorf("is not a regular file (%v)", m.Type())
}

// ReadVersioned reads a whole file or object together with the Attrs of
// exactly the content read, so a later Put with Cond{IfVersion:
// a.Version} replaces it only if nobody has written it since.
func ReadVersioned(ctx context.Context, uri string) ([]byte, Attrs, error) {
	ctx = beginOp(ctx)
	switch Scheme(uri) {
	case SchemeLocal:
		f, st, err := OpenRegular(uri)
		if err != nil {
			return nil, Attrs{}, err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		return b, localAttrs(st), err
	case SchemeGCS:
		return readVersionedGCS(ctx, uri)
	case SchemeS3:
		return readVersionedS3(ctx, uri)
	}
	b, err := ReadFile(ctx, uri)
	if err != nil {
		return nil, Attrs{}, err
	}
	return b, Attrs{Size: int64(len(b)), Version: contentVersion(b)}, nil
}

// OpenRegular opens the local file path for reading without blocking and
// refuses anything but a regular file: a named pipe planted where a file
// is expected would otherwise block the open (or the read) forever.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: errNotRegular(st.Mode())}
	}
	return f, st, nil
}

// readLocal reads a whole local regular file (OpenRegular).
func readLocal(path string) ([]byte, error) {
	f, _, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
