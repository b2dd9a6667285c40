package storage

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Writer writes one file or object atomically: nothing appears under its
// name until Close succeeds, and Abort leaves no trace.
//
// A local file is written to a hidden temporary beside it, synced and
// renamed. An object is spooled to a local temporary file and uploaded by
// Close through Beam's filesystem (an upload creates the object only when
// it completes), so an aborted write never sends anything.
type Writer struct {
	ctx  context.Context
	uri  string
	tmp  *os.File
	done bool
}

// Create starts writing uri. A local path's parent directory must exist.
func Create(ctx context.Context, uri string) (*Writer, error) {
	var tmp *os.File
	var err error
	if IsLocal(uri) {
		dir, base := filepath.Split(uri)
		if dir == "" {
			dir = "."
		}
		tmp, err = os.CreateTemp(dir, "."+base+".tmp-*")
		if err == nil {
			// CreateTemp makes 0600 files; outputs are meant to be shared.
			if err = tmp.Chmod(0o644); err != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", uri, err)
		}
	} else {
		if _, key, err := bucketKey(uri); err == nil && (key == "" || key[len(key)-1] == '/') {
			return nil, &Error{URI: uri, Err: fmt.Errorf("not an object name")}
		}
		if _, err := fsFor(ctx, uri); err != nil {
			return nil, err
		}
		if tmp, err = os.CreateTemp("", "smoothanon-upload-*"); err != nil {
			return nil, &Error{URI: uri, Err: fmt.Errorf("spooling the upload: %w", err)}
		}
	}
	return &Writer{ctx: ctx, uri: uri, tmp: tmp}, nil
}

// Write appends p.
func (w *Writer) Write(p []byte) (int, error) { return w.tmp.Write(p) }

// Close publishes what was written under the Writer's name.
func (w *Writer) Close() error {
	if w.done {
		return fmt.Errorf("%s: writer already closed", w.uri)
	}
	w.done = true
	defer os.Remove(w.tmp.Name())
	if IsLocal(w.uri) {
		err := w.tmp.Sync()
		if cerr := w.tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(w.tmp.Name(), w.uri)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w.uri, err)
		}
		return nil
	}
	defer w.tmp.Close()
	if _, err := w.tmp.Seek(0, io.SeekStart); err != nil {
		return &Error{URI: w.uri, Err: err}
	}
	return upload(w.ctx, w.uri, w.tmp)
}

// Abort discards what was written; the name is never touched.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.tmp.Close()
	os.Remove(w.tmp.Name())
}

// upload copies r to the object uri; a failed copy cancels the upload so
// no partial object is created.
func upload(ctx context.Context, uri string, r io.Reader) error {
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
	if _, err := io.Copy(wc, r); err != nil {
		cancel()
		wc.Close()
		return wrap(uri, err)
	}
	return wrap(uri, wc.Close())
}

// WriteFile writes data to uri atomically.
func WriteFile(ctx context.Context, uri string, data []byte) error {
	w, err := Create(ctx, uri)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return fmt.Errorf("%s: %w", uri, err)
	}
	return w.Close()
}
