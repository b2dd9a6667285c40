package storage

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"os"

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

func statS3(ctx context.Context, uri string) (Attrs, error) {
	c, bucket, key, err := s3Object(ctx, uri)
	if err != nil {
		return Attrs{}, err
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key, ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		return Attrs{}, wrap(uri, err)
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
