package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"golang.org/x/sync/errgroup"
)

// ReadFile reads a whole file or object.
func ReadFile(ctx context.Context, uri string) ([]byte, error) {
	ctx = beginOp(ctx)
	switch Scheme(uri) {
	case SchemeLocal:
		return readLocal(uri)
	case SchemeGCS:
		b, _, err := readVersionedGCS(ctx, uri)
		return b, err
	case SchemeS3:
		return readS3(ctx, uri)
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
	switch Scheme(uri) {
	case SchemeLocal:
		st, err := os.Stat(uri)
		if err != nil {
			return 0, err
		}
		return st.Size(), nil
	case SchemeGCS, SchemeS3:
		a, err := Stat(ctx, uri)
		return a.Size, err
	}
	fs, err := fsFor(ctx, uri)
	if err != nil {
		return 0, err
	}
	n, err := fs.Size(ctx, uri)
	return n, wrap(uri, err)
}

// Exists reports whether the file or object uri exists. A missing bucket
// is an error (ErrNoBucket), not a missing object.
func Exists(ctx context.Context, uri string) (bool, error) {
	_, err := Size(ctx, uri)
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Copy copies a file or object to dst within one store: server-side on a
// bucket (GCS: a rewrite, continued until a large object is done, keeping
// its CRC-32C; S3: CopyObject, up to 5 GiB, the copy's CRC-32C computed by
// S3), a local file by streaming it into an atomic write. A missing
// source is an error naming src, a missing destination bucket one naming
// dst.
func Copy(ctx context.Context, src, dst string) error {
	if Scheme(src) != Scheme(dst) {
		return &Error{URI: src, Err: errors.New("copy across stores to " + dst)}
	}
	ctx = beginOp(ctx)
	switch Scheme(src) {
	case SchemeLocal:
		return copyLocal(ctx, src, dst)
	case SchemeGCS:
		return copyGCS(ctx, src, dst)
	case SchemeS3:
		return copyS3(ctx, src, dst)
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

func copyLocal(ctx context.Context, src, dst string) error {
	f, _, err := OpenRegular(src)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := Create(ctx, dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, f); err != nil {
		w.Abort()
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return w.Close()
}

// Remove deletes a file or object; a missing one is not an error.
func Remove(ctx context.Context, uri string) error {
	ctx = beginOp(ctx)
	switch Scheme(uri) {
	case SchemeLocal:
		if err := os.Remove(uri); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	case SchemeGCS:
		return removeGCS(ctx, uri)
	case SchemeS3:
		return removeS3(ctx, uri)
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

// removeParallel is how many deletes RemoveAll sends at once.
const removeParallel = 16

// RemoveAll deletes a local directory tree or every object under prefix/
// (directory placeholders included). The first failure stops it.
func RemoveAll(ctx context.Context, prefix string) error {
	if IsLocal(prefix) {
		return os.RemoveAll(prefix)
	}
	ctx = beginOp(ctx)
	var objs []string
	switch Scheme(prefix) {
	case SchemeGCS, SchemeS3:
		bucket, key, err := bucketKey(prefix)
		if err != nil {
			return err
		}
		err = listBucket(ctx, prefix, bucket, treePrefix(key), false, false, func(k string, _ Attrs) {
			objs = append(objs, objectURI(prefix, bucket, k))
		})
		if err != nil {
			return err
		}
	default:
		var err error
		if objs, err = ListTree(ctx, prefix); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(removeParallel)
	for _, o := range objs {
		g.Go(func() error { return Remove(gctx, o) })
	}
	return g.Wait()
}

// MkdirAll creates a local directory and its parents; object stores have
// no directories and need none.
func MkdirAll(uri string) error {
	if IsLocal(uri) {
		return os.MkdirAll(uri, 0o755)
	}
	return nil
}
