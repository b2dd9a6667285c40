package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

var s3Clients clients[*s3.Client]

// s3ClientFor returns a client from the AWS default chain (environment,
// shared files, instance roles); AWS_ENDPOINT_URL_S3 points it elsewhere.
// Its requests go through a boundedTransport, each step of an operation
// tried at most three times with a short backoff and no retry quota.
func s3ClientFor(ctx context.Context) (*s3.Client, error) {
	return s3Clients.get(endpointKey(SchemeS3), func() (*s3.Client, error) {
		cfg, err := config.LoadDefaultConfig(ctx,
			config.WithRetryer(func() aws.Retryer {
				return retry.NewStandard(func(o *retry.StandardOptions) {
					o.MaxAttempts = maxAttempts
					o.MaxBackoff = time.Second
					o.RateLimiter = ratelimit.None
				})
			}))
		if err != nil {
			return nil, fmt.Errorf("loading the AWS configuration: %w", err)
		}
		// The configuration's own client carries a custom CA bundle
		// (AWS_CA_BUNDLE, ca_bundle) in its TLS settings; the store is
		// reached through a boundedTransport with the same settings.
		tr := newTransport(Timeout())
		if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
			if tls := bc.GetTransport().TLSClientConfig; tls != nil {
				tr.base.TLSClientConfig = tls.Clone()
			}
		}
		return s3.NewFromConfig(cfg, func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: tr} }), nil
	})
}

// s3File reads one version of an object, identified by its ETag: every
// ranged GET carries If-Match and its answer's ETag is checked too, so a
// rewrite while reading fails with ErrChanged.
type s3File struct {
	ctx         context.Context
	uri         string
	c           *s3.Client
	bucket, key string
	size        int64
	etag        string
	counter
}

func openS3(ctx context.Context, uri string) (File, error) {
	bucket, key, err := bucketKey(uri)
	if err != nil {
		return nil, err
	}
	c, err := s3ClientFor(ctx)
	if err != nil {
		return nil, wrap(uri, err)
	}
	if key == "" || key[len(key)-1] == '/' {
		return nil, &Error{URI: uri, Err: fmt.Errorf("not an object name")}
	}
	octx := beginOp(ctx)
	head, err := c.HeadObject(octx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return nil, wrap(uri, s3Missing(octx, c, bucket, err))
	}
	return &s3File{ctx: ctx, uri: uri, c: c, bucket: bucket, key: key,
		size: aws.ToInt64(head.ContentLength), etag: aws.ToString(head.ETag)}, nil
}

func (f *s3File) Size() int64  { return f.size }
func (f *s3File) Close() error { return nil }

func (f *s3File) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), f.size-off)
	rng := fmt.Sprintf("bytes=%d-%d", off, off+want-1)
	out, err := f.c.GetObject(newOp(f.ctx), &s3.GetObjectInput{Bucket: &f.bucket, Key: &f.key, Range: &rng, IfMatch: &f.etag})
	if err != nil {
		if errors.Is(classify(err), ErrNotExist) {
			err = fmt.Errorf("%w: the object is gone", ErrChanged)
		}
		return 0, wrap(f.uri, err)
	}
	defer out.Body.Close()
	if etag := aws.ToString(out.ETag); etag != f.etag {
		return 0, wrap(f.uri, fmt.Errorf("%w: ETag %s, opened as %s", ErrChanged, etag, f.etag))
	}
	n, err := io.ReadFull(out.Body, p[:want])
	f.add(n)
	if err != nil {
		return n, wrap(f.uri, err)
	}
	if int64(len(p)) > want {
		return n, io.EOF
	}
	return n, nil
}
