package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
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

// gcsMissing turns a missing object into a missing bucket when the
// bucket is missing (a read or a copy answers 404 for either).
func gcsMissing(ctx context.Context, c *gcsClient, bucket string, err error) error {
	if errors.Is(err, gcs.ErrObjectNotExist) {
		if _, berr := c.Bucket(bucket).Attrs(ctx); errors.Is(berr, gcs.ErrBucketNotExist) {
			return berr
		}
	}
	return err
}

func statGCS(ctx context.Context, uri string) (Attrs, error) {
	c, obj, err := gcsObject(ctx, uri)
	if err != nil {
		return Attrs{}, err
	}
	a, err := obj.Attrs(ctx)
	if err != nil {
		return Attrs{}, c.wrap(uri, gcsMissing(ctx, c, obj.BucketName(), err))
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
		return nil, Attrs{}, c.wrap(uri, gcsMissing(ctx, c, obj.BucketName(), err))
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

// listGCS calls fn for each object whose name starts with prefix, in name
// order; with delim, only those with no / after the prefix. The attributes
// are filled in when withAttrs.
func listGCS(ctx context.Context, uri, bucket, prefix string, delim, withAttrs bool, fn func(key string, a Attrs)) error {
	c, err := gcsClientFor(ctx)
	if err != nil {
		return wrap(uri, err)
	}
	q := &gcs.Query{Prefix: prefix}
	if delim {
		q.Delimiter = "/"
	}
	sel := []string{"Name"}
	if withAttrs {
		sel = append(sel, "Size", "Generation", "CRC32C", "Updated")
	}
	if err := q.SetAttrSelection(sel); err != nil {
		return &Error{URI: uri, Err: err}
	}
	it := c.Bucket(bucket).Objects(ctx, q)
	for {
		o, err := it.Next()
		if err == iterator.Done {
			return nil
		}
		if err != nil {
			return c.wrap(uri, err)
		}
		if o.Name == "" { // a prefix under the delimiter
			continue
		}
		var a Attrs
		if withAttrs {
			a = gcsAttrs(o)
		}
		fn(o.Name, a)
	}
}

// copyGCS copies an object server-side with the client's Copier, which
// repeats the rewrite call until a large object is done; the copy keeps
// the content and so its CRC-32C.
func copyGCS(ctx context.Context, src, dst string) error {
	c, sobj, err := gcsObject(ctx, src)
	if err != nil {
		return err
	}
	_, dobj, err := gcsObject(ctx, dst)
	if err != nil {
		return err
	}
	if _, err := dobj.CopierFrom(sobj).Run(ctx); err != nil {
		if errors.Is(err, gcs.ErrObjectNotExist) || isNotFound(err) {
			if _, berr := c.Bucket(dobj.BucketName()).Attrs(ctx); errors.Is(berr, gcs.ErrBucketNotExist) {
				return &Error{URI: dst, Err: ErrNoBucket}
			}
			return c.wrap(src, gcsMissing(ctx, c, sobj.BucketName(), gcs.ErrObjectNotExist))
		}
		return c.wrap(src, err)
	}
	return nil
}

// isNotFound reports an HTTP 404 of the GCS JSON API.
func isNotFound(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == 404
}

// removeGCS deletes an object; a missing one is not an error.
func removeGCS(ctx context.Context, uri string) error {
	c, obj, err := gcsObject(ctx, uri)
	if err != nil {
		return err
	}
	if err := obj.Delete(ctx); err != nil && !errors.Is(err, gcs.ErrObjectNotExist) {
		return c.wrap(uri, err)
	}
	return nil
}
