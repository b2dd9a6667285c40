package storage

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync/atomic"
)

// File is an open object or file read by byte ranges.
type File interface {
	io.ReaderAt
	io.Closer
	// Size is the length of the object in bytes, fixed at Open.
	Size() int64
	// Stats counts the requests sent and bytes received by ReadAt so far.
	Stats() ReadStats
}

// ReadStats count the ranged reads of a File.
type ReadStats struct {
	Requests int64 // ranged requests sent (ReadAt calls on a local file)
	Bytes    int64 // bytes received
}

// counter counts ReadAt calls and bytes, safely from several goroutines.
type counter struct{ requests, bytes atomic.Int64 }

func (c *counter) add(n int) {
	c.requests.Add(1)
	c.bytes.Add(int64(n))
}

func (c *counter) Stats() ReadStats {
	return ReadStats{Requests: c.requests.Load(), Bytes: c.bytes.Load()}
}

// Open opens uri for ranged reads. A local path is opened with os.Open and
// its errors are the os package's (*fs.PathError); other errors are *Error.
func Open(ctx context.Context, uri string) (File, error) {
	switch Scheme(uri) {
	case SchemeLocal:
		return openLocal(uri)
	case SchemeGCS:
		return openGCS(ctx, uri)
	case SchemeS3:
		return openS3(ctx, uri)
	}
	return openWhole(ctx, uri)
}

type localFile struct {
	*os.File
	size int64
	counter
}

func openLocal(path string) (File, error) {
	f, st, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	return &localFile{File: f, size: st.Size()}, nil
}

func (f *localFile) Size() int64 { return f.size }

func (f *localFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.add(n)
	return n, err
}

// wholeFile is an object of a store without ranged reads (memfs), read
// into memory once.
type wholeFile struct {
	*bytes.Reader
	counter
}

func openWhole(ctx context.Context, uri string) (File, error) {
	b, err := ReadFile(ctx, uri)
	if err != nil {
		return nil, err
	}
	f := &wholeFile{Reader: bytes.NewReader(b)}
	f.add(len(b))
	return f, nil
}

func (f *wholeFile) Close() error { return nil }
