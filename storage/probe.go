package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	gcs "cloud.google.com/go/storage"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Probe sends one cheap request to the store behind uri and reports
// whether it answers and lets this process in: the bucket's attributes on
// GCS, HeadBucket on S3, one attempt, bounded by the Timeout (plus two
// seconds for the credentials). A refusal is an answer: a missing bucket
// matches ErrNoBucket, missing or rejected credentials ErrNoCredentials,
// a denied request ErrPermission (GCS needs storage.buckets.get, S3
// s3:ListBucket); no answer matches ErrTimeout. A local path is fine when
// its nearest existing ancestor is a directory (or the path itself
// exists). memfs always answers.
func Probe(ctx context.Context, uri string) error {
	switch Scheme(uri) {
	case SchemeLocal:
		return probeLocal(uri)
	case SchemeGCS, SchemeS3:
	default:
		_, err := fsFor(ctx, uri)
		return err
	}
	pctx, cancel := context.WithTimeout(beginOp(ctx), Timeout()+2*time.Second)
	defer cancel()
	var err error
	if Scheme(uri) == SchemeGCS {
		err = probeGCS(pctx, uri)
	} else {
		err = probeS3(pctx, uri)
	}
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return &Error{URI: uri, Err: &cause{ErrTimeout, fmt.Sprintf("no answer within %v", Timeout())}}
	}
	return err
}

func probeLocal(path string) error {
	p := filepath.Clean(path)
	for {
		st, err := os.Stat(p)
		switch {
		case err == nil && (st.IsDir() || p == filepath.Clean(path)):
			return nil
		case err == nil:
			return &os.PathError{Op: "probe", Path: path, Err: fmt.Errorf("%s is not a directory", p)}
		case !errors.Is(err, os.ErrNotExist):
			return err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return err
		}
		p = parent
	}
}

// probeGCS reads the attributes of uri's bucket, in one attempt.
func probeGCS(ctx context.Context, uri string) error {
	bucket, _, err := bucketKey(uri)
	if err != nil {
		return err
	}
	c, err := gcsClientFor(ctx)
	if err != nil {
		return wrap(uri, err)
	}
	_, err = c.Bucket(bucket).Retryer(gcs.WithMaxAttempts(1)).Attrs(ctx)
	return c.wrap(uri, err)
}

// probeS3 asks for uri's bucket (HeadBucket), in one attempt.
func probeS3(ctx context.Context, uri string) error {
	bucket, _, err := bucketKey(uri)
	if err != nil {
		return err
	}
	c, err := s3ClientFor(ctx)
	if err != nil {
		return wrap(uri, err)
	}
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	if err != nil && errors.Is(classify(err), ErrNotExist) {
		err = ErrNoBucket
	}
	return wrap(uri, err)
}
