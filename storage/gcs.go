package storage

import (
	"context"
	"errors"
	"fmt"
	"io"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/option"
)

var gcsClients clients[*gcsClient]

// gcsClient is a native GCS client; noAuth holds why Application Default
// Credentials were not found when it sends requests unauthenticated (as
// Beam's gcs filesystem does), to name that cause on a 401.
type gcsClient struct {
	*gcs.Client
	noAuth error
}

func gcsClientFor(ctx context.Context) (*gcsClient, error) {
	return gcsClients.get(endpointKey(SchemeGCS), func() (*gcsClient, error) {
		c, err := gcs.NewClient(ctx)
		if err == nil {
			return &gcsClient{Client: c}, nil
		}
		anon, aerr := gcs.NewClient(ctx, option.WithoutAuthentication())
		if aerr != nil {
			return nil, &cause{ErrNoCredentials, shortDetail(err.Error())}
		}
		return &gcsClient{Client: anon, noAuth: err}, nil
	})
}

// gcsWrap is wrap, naming the missing credentials behind a refusal of an
// unauthenticated request.
func (c *gcsClient) wrap(uri string, err error) error {
	err = wrap(uri, err)
	if c.noAuth != nil && (errors.Is(err, ErrNoCredentials) || errors.Is(err, ErrPermission)) {
		return &Error{URI: uri, Err: &cause{ErrNoCredentials, shortDetail(c.noAuth.Error())}}
	}
	return err
}

// gcsFile reads one generation of an object: a rewrite of the object
// while it is read fails the next read with ErrChanged instead of mixing
// bytes of two versions.
type gcsFile struct {
	ctx  context.Context
	uri  string
	c    *gcsClient
	obj  *gcs.ObjectHandle
	size int64
	gen  int64
	counter
}

func openGCS(ctx context.Context, uri string) (File, error) {
	bucket, key, err := bucketKey(uri)
	if err != nil {
		return nil, err
	}
	c, err := gcsClientFor(ctx)
	if err != nil {
		return nil, wrap(uri, err)
	}
	if key == "" || key[len(key)-1] == '/' {
		return nil, &Error{URI: uri, Err: fmt.Errorf("not an object name")}
	}
	obj := c.Bucket(bucket).Object(key)
	attrs, err := obj.Attrs(ctx)
	if errors.Is(err, gcs.ErrObjectNotExist) {
		if _, berr := c.Bucket(bucket).Attrs(ctx); errors.Is(berr, gcs.ErrBucketNotExist) {
			err = berr
		}
	}
	if err != nil {
		return nil, c.wrap(uri, err)
	}
	return &gcsFile{ctx: ctx, uri: uri, c: c, obj: obj.Generation(attrs.Generation), size: attrs.Size, gen: attrs.Generation}, nil
}

func (f *gcsFile) Size() int64  { return f.size }
func (f *gcsFile) Close() error { return nil }

func (f *gcsFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), f.size-off)
	r, err := f.obj.NewRangeReader(f.ctx, off, want)
	if err != nil {
		if errors.Is(err, gcs.ErrObjectNotExist) {
			err = fmt.Errorf("%w: generation %d is gone", ErrChanged, f.gen)
		}
		return 0, f.c.wrap(f.uri, err)
	}
	defer r.Close()
	n, err := io.ReadFull(r, p[:want])
	f.add(n)
	if err != nil {
		return n, f.c.wrap(f.uri, err)
	}
	if int64(len(p)) > want {
		return n, io.EOF
	}
	return n, nil
}
