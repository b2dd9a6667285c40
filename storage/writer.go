package storage

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// castagnoli is the CRC-32C table, the checksum GCS and S3 keep.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer writes one file or object atomically: nothing appears under its
// name until Close or Commit succeeds, and Abort leaves no trace.
//
// A local file is written to a hidden temporary beside it
// (TempPrefix(name)), synced and renamed. An object is spooled to a local
// temporary file (SpoolPrefix in the temp directory) and uploaded by
// Close, so an aborted write never sends anything, and an upload creates
// the object only when it completes. Either temporary is held under an
// exclusive flock while it is written, so a sweep can tell the temporaries
// of a dead process (lock free) from a live one's (IsLive).
type Writer struct {
	ctx     context.Context
	uri     string
	tmp     *os.File
	tmpName string
	crc     uint32
	size    int64
	done    bool
}

// TempPrefix is the name prefix of the temporary files a local write of
// path makes beside it.
func TempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// SpoolPrefix is the name prefix of the temporary files uploads spool to
// in the temp directory.
const SpoolPrefix = "smoothanon-upload-"

// Create starts writing uri. A local path's parent directory must exist.
func Create(ctx context.Context, uri string) (*Writer, error) {
	if err := CheckName(uri); err != nil {
		return nil, err
	}
	if IsLocal(uri) {
		dir, base := filepath.Split(uri)
		tmp, name, err := CreateLocked(dir, TempPrefix(base))
		if err == nil {
			// CreateTemp makes 0600 files; outputs are meant to be shared.
			if err = tmp.Chmod(0o644); err != nil {
				tmp.Close()
				os.Remove(name)
			}
		}
		if err != nil {
			return nil, localErr(uri, err)
		}
		return &Writer{ctx: ctx, uri: uri, tmp: tmp, tmpName: name}, nil
	}
	if _, key, err := bucketKey(uri); err == nil && (key == "" || key[len(key)-1] == '/') {
		return nil, &Error{URI: uri, Err: fmt.Errorf("not an object name")}
	}
	if err := checkStore(ctx, uri); err != nil {
		return nil, err
	}
	tmp, name, err := CreateLocked(os.TempDir(), SpoolPrefix)
	if err != nil {
		return nil, &Error{URI: uri, Err: fmt.Errorf("spooling the upload: %w", err)}
	}
	return &Writer{ctx: ctx, uri: uri, tmp: tmp, tmpName: name}, nil
}

// Write appends p.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.tmp.Write(p)
	w.crc = crc32.Update(w.crc, castagnoli, p[:n])
	w.size += int64(n)
	if err != nil {
		return n, localErr(w.uri, err)
	}
	return n, nil
}

// localErr is a failed local write of uri as an *Error: one line naming
// the file and the cause (no space left, permission denied), without the
// temporary file's name.
func localErr(uri string, err error) error {
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{URI: uri, Err: err}
}

// CRC32C is the Castagnoli CRC-32 of the bytes written so far.
func (w *Writer) CRC32C() uint32 { return w.crc }

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.size }

// Close publishes what was written under the Writer's name.
func (w *Writer) Close() error { return w.Commit(Cond{}) }

// Commit publishes what was written under the Writer's name if c holds;
// otherwise it discards it and returns an error matching ErrConflict.
// Either way the Writer is finished.
func (w *Writer) Commit(c Cond) error {
	if w.done {
		return fmt.Errorf("%s: writer already closed", w.uri)
	}
	w.done = true
	defer os.Remove(w.tmpName)
	if err := c.check(); err != nil {
		w.tmp.Close()
		return &Error{URI: w.uri, Err: err}
	}
	if IsLocal(w.uri) {
		err := w.tmp.Sync()
		if cerr := w.tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = commitLocal(w.tmpName, w.uri, c)
		}
		if err != nil {
			return localErr(w.uri, err)
		}
		return nil
	}
	defer w.tmp.Close()
	if _, err := w.tmp.Seek(0, io.SeekStart); err != nil {
		return &Error{URI: w.uri, Err: err}
	}
	return upload(w.ctx, w.uri, w.tmp, w.size, w.crc, c)
}

// Abort discards what was written; the name is never touched.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.tmp.Close()
	os.Remove(w.tmpName)
}

// upload copies the size bytes of f, whose CRC-32C is crc, to the object
// uri if c holds. A failed upload creates no object.
func upload(ctx context.Context, uri string, f *os.File, size int64, crc uint32, c Cond) error {
	ctx = beginOp(ctx)
	switch Scheme(uri) {
	case SchemeGCS:
		return uploadGCS(ctx, uri, f, size, crc, c)
	case SchemeS3:
		return uploadS3(ctx, uri, f, size, crc, c)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return &Error{URI: uri, Err: err}
	}
	if err := commitOther(ctx, uri, data, c); err != nil {
		return wrap(uri, err)
	}
	fs, err := fsFor(ctx, uri)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wc, err := fs.OpenWrite(ctx, uri)
	if err != nil {
		return wrap(uri, err)
	}
	if _, err := wc.Write(data); err != nil {
		cancel()
		wc.Close()
		return wrap(uri, err)
	}
	return wrap(uri, wc.Close())
}

// WriteFile writes data to uri atomically.
func WriteFile(ctx context.Context, uri string, data []byte) error {
	return Put(ctx, uri, data, Cond{})
}
