package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	gcs "cloud.google.com/go/storage"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/api/option/internaloption"
	htransport "google.golang.org/api/transport/http"
)

var gcsClients clients[*gcsClient]

// gcsClient is a native GCS client; noAuth holds why Application Default
// Credentials were not found when it sends requests unauthenticated (as
// Beam's gcs filesystem does), to name that cause on a 401.
type gcsClient struct {
	*gcs.Client
	noAuth error
}

// gcsScopes are the OAuth scopes the client asks of the credentials.
var gcsScopes = []string{gcs.ScopeFullControl, "https://www.googleapis.com/auth/cloud-platform"}

// defaultRetryGCS is what the GCS client retries by default (HTTP 408,
// 429, 5xx, dropped connections).
var defaultRetryGCS = gcs.ShouldRetry

// gcsClientFor returns the client of the current endpoint and timeout. Its
// requests go through a boundedTransport: with STORAGE_EMULATOR_HOST
// unauthenticated to the emulator, otherwise with Application Default
// Credentials layered on top of it, or unauthenticated when there are
// none. Each step of an operation is tried at most three times, with a
// short backoff.
func gcsClientFor(ctx context.Context) (*gcsClient, error) {
	return gcsClients.get(endpointKey(SchemeGCS), func() (*gcsClient, error) {
		return newGCSClient(ctx, Timeout())
	})
}

// newGCSClient makes the client gcsClientFor caches; extra options are for
// tests (an endpoint).
func newGCSClient(ctx context.Context, d time.Duration, extra ...option.ClientOption) (*gcsClient, error) {
	base := newTransport(d)
	rt := http.RoundTripper(base)
	var noAuth error
	if os.Getenv("STORAGE_EMULATOR_HOST") == "" {
		auth, err := htransport.NewTransport(ctx, base, option.WithScopes(gcsScopes...),
			internaloption.WithDefaultEndpointTemplate("https://storage.UNIVERSE_DOMAIN/storage/v1/"),
			internaloption.WithDefaultMTLSEndpoint("https://storage.mtls.googleapis.com/storage/v1/"),
			internaloption.WithDefaultUniverseDomain("googleapis.com"),
			internaloption.EnableNewAuthLibrary())
		if err != nil {
			noAuth = err
		} else {
			rt = auth
		}
	}
	c, err := gcs.NewClient(ctx, append([]option.ClientOption{option.WithHTTPClient(&http.Client{Transport: rt})}, extra...)...)
	if err != nil {
		if noAuth != nil {
			return nil, &cause{ErrNoCredentials, shortDetail(noAuth.Error())}
		}
		return nil, err
	}
	c.SetRetry(gcs.WithMaxAttempts(maxAttempts), gcs.WithErrorFunc(retryable),
		gcs.WithBackoff(gax.Backoff{Initial: 200 * time.Millisecond, Max: time.Second, Multiplier: 2}))
	return &gcsClient{Client: c, noAuth: noAuth}, nil
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
	octx := beginOp(ctx)
	attrs, err := obj.Attrs(octx)
	if err != nil {
		err = gcsMissing(octx, c, bucket, err)
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
	r, err := f.obj.NewRangeReader(newOp(f.ctx), off, want)
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
