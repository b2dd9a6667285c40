package storage

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// s3Object returns the client, bucket and key of the object uri.
func s3Object(ctx context.Context, uri string) (*s3.Client, string, string, error) {
	bucket, key, err := bucketKey(uri)
	if err != nil {
		return nil, "", "", err
	}
	c, err := s3ClientFor(ctx)
	if err != nil {
		return nil, "", "", wrap(uri, err)
	}
	return c, bucket, key, nil
}

// s3CRC decodes an S3 checksum header (base64 of the big-endian CRC);
// a multipart object's composite checksum ("...-N") is not one.
func s3CRC(s *string) (uint32, bool) {
	b, err := base64.StdEncoding.DecodeString(aws.ToString(s))
	if err != nil || len(b) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(b), true
}

// s3Missing turns the 404 of a HEAD, which has no body to tell a missing
// object from a missing bucket, into ErrNoBucket when the bucket is
// missing.
func s3Missing(ctx context.Context, c *s3.Client, bucket string, err error) error {
	var nf *types.NotFound
	if errors.As(err, &nf) {
		if _, berr := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket}); berr != nil && errors.Is(classify(berr), ErrNotExist) {
			return ErrNoBucket
		}
	}
	return err
}

func statS3(ctx context.Context, uri string) (Attrs, error) {
	c, bucket, key, err := s3Object(ctx, uri)
	if err != nil {
		return Attrs{}, err
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key, ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		return Attrs{}, wrap(uri, s3Missing(ctx, c, bucket, err))
	}
	a := Attrs{Size: aws.ToInt64(h.ContentLength), Version: aws.ToString(h.ETag), Updated: aws.ToTime(h.LastModified)}
	a.CRC32C, a.HasCRC32C = s3CRC(h.ChecksumCRC32C)
	return a, nil
}

func readVersionedS3(ctx context.Context, uri string) ([]byte, Attrs, error) {
	c, bucket, key, err := s3Object(ctx, uri)
	if err != nil {
		return nil, Attrs{}, err
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return nil, Attrs{}, wrap(uri, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, Attrs{}, wrap(uri, err)
	}
	return b, Attrs{Size: int64(len(b)), Version: aws.ToString(out.ETag), Updated: aws.ToTime(out.LastModified)}, nil
}

// uploadS3 puts f to uri with its CRC-32C, which the server checks and
// keeps, under the precondition c (If-None-Match, If-Match).
func uploadS3(ctx context.Context, uri string, f *os.File, size int64, crc uint32, c Cond) error {
	cl, bucket, key, err := s3Object(ctx, uri)
	if err != nil {
		return err
	}
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc)
	in := &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: f, ContentLength: aws.Int64(size),
		ChecksumCRC32C: aws.String(base64.StdEncoding.EncodeToString(sum[:]))}
	switch {
	case c.IfAbsent:
		in.IfNoneMatch = aws.String("*")
	case c.IfVersion != "":
		in.IfMatch = aws.String(c.IfVersion)
	}
	if _, err := cl.PutObject(ctx, in); err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict") || isPrecondition(err) {
			return &Error{URI: uri, Err: ErrConflict}
		}
		return wrap(uri, err)
	}
	return nil
}

// listS3 calls fn for each object whose key starts with prefix, in key
// order; with delim, only those with no / after the prefix. S3 listings
// carry size, ETag and modification time, never the CRC-32C.
func listS3(ctx context.Context, uri, bucket, prefix string, delim bool, fn func(key string, a Attrs)) error {
	c, err := s3ClientFor(ctx)
	if err != nil {
		return wrap(uri, err)
	}
	in := &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix}
	if delim {
		in.Delimiter = aws.String("/")
	}
	p := s3.NewListObjectsV2Paginator(c, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return wrap(uri, err)
		}
		for _, o := range page.Contents {
			fn(aws.ToString(o.Key), Attrs{Size: aws.ToInt64(o.Size), Version: aws.ToString(o.ETag), Updated: aws.ToTime(o.LastModified)})
		}
	}
	return nil
}

// copyS3 copies an object server-side (CopyObject: up to 5 GiB) and has
// S3 compute the copy's CRC-32C.
func copyS3(ctx context.Context, src, dst string) error {
	c, sb, sk, err := s3Object(ctx, src)
	if err != nil {
		return err
	}
	_, db, dk, err := s3Object(ctx, dst)
	if err != nil {
		return err
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &db, Key: &dk, CopySource: aws.String(copySource(sb, sk)),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
	if err == nil {
		return nil
	}
	// Which bucket is missing, if one is.
	if errors.Is(classify(err), ErrNoBucket) || errors.Is(classify(err), ErrNotExist) {
		for _, b := range []struct{ bucket, uri string }{{sb, src}, {db, dst}} {
			if _, berr := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &b.bucket}); berr != nil && errors.Is(classify(berr), ErrNotExist) {
				return &Error{URI: b.uri, Err: ErrNoBucket}
			}
		}
		return &Error{URI: src, Err: noObject{}}
	}
	return wrap(src, err)
}

// copySource is the x-amz-copy-source of an object: bucket/key with every
// byte of each path segment but the unreserved ones (A-Z a-z 0-9 - . _ ~)
// percent-encoded, so S3 decodes it to the key as written ('+' is sent as
// %2B, never read as a space).
func copySource(bucket, key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = escapeSegment(s)
	}
	return escapeSegment(bucket) + "/" + strings.Join(segs, "/")
}

func escapeSegment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// removeS3 deletes an object; S3 answers a delete of a missing one with
// success.
func removeS3(ctx context.Context, uri string) error {
	c, bucket, key, err := s3Object(ctx, uri)
	if err != nil {
		return err
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		return wrap(uri, err)
	}
	return nil
}

// readS3 reads a whole object.
func readS3(ctx context.Context, uri string) ([]byte, error) {
	b, _, err := readVersionedS3(ctx, uri)
	return b, err
}
