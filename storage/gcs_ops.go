package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
)

// gcsObject returns the client and handle of the object uri.
func gcsObject(ctx context.Context, uri string) (*gcsClient, *gcs.ObjectHandle, error) {
	bucket, key, err := bucketKey(uri)
	if err != nil {
		return nil, nil, err
	}
	c, err := gcsClientFor(ctx)
	if err != nil {
		return nil, nil, wrap(uri, err)
	}
	return c, c.Bucket(bucket).Object(key), nil
}

func gcsAttrs(a *gcs.ObjectAttrs) Attrs {
	return Attrs{Size: a.Size, Version: strconv.FormatInt(a.Generation, 10), CRC32C: a.CRC32C, HasCRC32C: true, Updated: a.Updated}
}

func statGCS(ctx context.Context, uri string) (Attrs, error) {
	c, obj, err := gcsObject(ctx, uri)
	if err != nil {
		return Attrs{}, err
	}
	a, err := obj.Attrs(ctx)
	if err != nil {
		return Attrs{}, c.wrap(uri, err)
	}
	return gcsAttrs(a), nil
}

func readVersionedGCS(ctx context.Context, uri string) ([]byte, Attrs, error) {
	c, obj, err := gcsObject(ctx, uri)
	if err != nil {
		return nil, Attrs{}, err
	}
	r, err := obj.NewReader(ctx)
	if err != nil {
		return nil, Attrs{}, c.wrap(uri, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, Attrs{}, c.wrap(uri, err)
	}
	a := Attrs{Size: int64(len(b)), Version: strconv.FormatInt(r.Attrs.Generation, 10), Updated: r.Attrs.LastModified}
	if crc, ok := r.Attrs.CRC32C, r.Attrs.CRC32C != 0 || len(b) == 0; ok {
		a.CRC32C, a.HasCRC32C = crc, true
	}
	return b, a, nil
}

// uploadGCS uploads f to uri with its CRC-32C, which the server checks,
// under the precondition c (ifGenerationMatch).
func uploadGCS(ctx context.Context, uri string, f *os.File, size int64, crc uint32, c Cond) error {
	cl, obj, err := gcsObject(ctx, uri)
	if err != nil {
		return err
	}
	switch {
	case c.IfAbsent:
		obj = obj.If(gcs.Conditions{DoesNotExist: true})
	case c.IfVersion != "":
		gen, err := strconv.ParseInt(c.IfVersion, 10, 64)
		if err != nil {
			return &Error{URI: uri, Err: ErrConflict}
		}
		obj = obj.If(gcs.Conditions{GenerationMatch: gen})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := obj.NewWriter(ctx)
	w.CRC32C, w.SendCRC32C = crc, true
	if _, err := io.Copy(w, f); err != nil {
		cancel()
		w.Close()
		return cl.wrap(uri, err)
	}
	if err := w.Close(); err != nil {
		if isPrecondition(err) {
			return &Error{URI: uri, Err: ErrConflict}
		}
		return cl.wrap(uri, err)
	}
	return nil
}

// isPrecondition reports a refused precondition (HTTP 412) of GCS or S3.
func isPrecondition(err error) bool {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code == 412
	}
	return errors.Is(classify(err), ErrChanged)
}
