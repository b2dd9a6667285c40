package main

import (
	"context"
	"io"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/storage"
)

// writeFileAtomic writes data to path (local or a URI) so that path never
// holds a partial file (storage.WriteFile).
func writeFileAtomic(path string, data []byte) error {
	return storage.WriteFile(context.Background(), path, data)
}

// printReport writes r as JSON (release.EncodeReport) to w.
func printReport(w io.Writer, r *smoothanonpb.RunReport) error {
	b, err := release.EncodeReport(r)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
