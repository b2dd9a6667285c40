package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
)

// ReadFile reads a whole file or object.
func ReadFile(ctx context.Context, uri string) ([]byte, error) {
	if IsLocal(uri) {
		return os.ReadFile(uri)
	}
	fs, err := fsFor(ctx, uri)
	if err != nil {
		return nil, err
	}
	r, err := fs.OpenRead(ctx, uri)
	if err != nil {
		return nil, wrap(uri, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return b, wrap(uri, err)
}

// Size returns the size of a file or object; a missing one is an error
// matching ErrNotExist.
func Size(ctx context.Context, uri string) (int64, error) {
	if IsLocal(uri) {
		st, err := os.Stat(uri)
		if err != nil {
			return 0, err
		}
		return st.Size(), nil
	}
	fs, err := fsFor(ctx, uri)
	if err != nil {
		return 0, err
	}
	n, err := fs.Size(ctx, uri)
	return n, wrap(uri, err)
}

// Exists reports whether the file or object uri exists.
func Exists(ctx context.Context, uri string) (bool, error) {
	_, err := Size(ctx, uri)
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// List returns the sorted files or objects matching glob; * and ? do not
// match a /.
func List(ctx context.Context, glob string) ([]string, error) {
	if IsLocal(glob) {
		return filepath.Glob(glob)
	}
	fs, err := fsFor(ctx, glob)
	if err != nil {
		return nil, err
	}
	out, err := fs.List(ctx, glob)
	if err != nil {
		return nil, wrap(glob, err)
	}
	sort.Strings(out)
	return out, nil
}

// maxTreeDepth bounds how deep ListTree looks below a prefix; the layouts
// this program writes are two levels deep.
const maxTreeDepth = 4

// ListTree returns every object under prefix (prefix/... up to
// maxTreeDepth levels), sorted. Local directories are walked.
func ListTree(ctx context.Context, prefix string) ([]string, error) {
	if IsLocal(prefix) {
		var out []string
		err := filepath.WalkDir(prefix, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, p)
			}
			return err
		})
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return out, err
	}
	var out []string
	pattern := Clean(prefix)
	for range maxTreeDepth {
		pattern += "/*"
		m, err := List(ctx, pattern)
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	sort.Strings(out)
	return out, nil
}

// Copy copies an object server-side (a local file by reading it).
func Copy(ctx context.Context, src, dst string) error {
	if IsLocal(src) != IsLocal(dst) || (!IsLocal(src) && Scheme(src) != Scheme(dst)) {
		return &Error{URI: src, Err: errors.New("copy across stores to " + dst)}
	}
	fs, err := fsFor(ctx, src)
	if err != nil {
		return err
	}
	c, ok := fs.(filesystem.Copier)
	if !ok {
		return &Error{URI: src, Err: errors.New("the store cannot copy")}
	}
	return wrap(src, c.Copy(ctx, src, dst))
}

// Remove deletes a file or object; a missing one is not an error.
func Remove(ctx context.Context, uri string) error {
	if IsLocal(uri) {
		if err := os.Remove(uri); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	fs, err := fsFor(ctx, uri)
	if err != nil {
		return err
	}
	rm, ok := fs.(filesystem.Remover)
	if !ok {
		return &Error{URI: uri, Err: errors.New("the store cannot remove")}
	}
	if err := wrap(uri, rm.Remove(ctx, uri)); err != nil && !errors.Is(err, ErrNotExist) {
		return err
	}
	return nil
}

// RemoveAll deletes a local directory tree or every object under prefix.
func RemoveAll(ctx context.Context, prefix string) error {
	if IsLocal(prefix) {
		return os.RemoveAll(prefix)
	}
	objs, err := ListTree(ctx, prefix)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := Remove(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// MkdirAll creates a local directory and its parents; object stores have
// no directories and need none.
func MkdirAll(uri string) error {
	if IsLocal(uri) {
		return os.MkdirAll(uri, 0o755)
	}
	return nil
}
