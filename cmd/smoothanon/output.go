package main

import (
	"context"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/storage"
)

// writeFileAtomic writes data to path (local or a URI) so that path never
// holds a partial file (storage.WriteFile).
func writeFileAtomic(path string, data []byte) error {
	return storage.WriteFile(context.Background(), path, data)
}

// writeReport writes r as JSON (protojson, proto field names, defaults
// included) to path: "" is nowhere, "-" is stdout, anything else a file
// written atomically.
func writeReport(path string, r *smoothanonpb.RunReport, stdout io.Writer) error {
	if path == "" {
		return nil
	}
	js, err := protojson.MarshalOptions{Multiline: true, UseProtoNames: true, EmitDefaultValues: true}.Marshal(r)
	if err != nil {
		return err
	}
	js = append(js, '\n')
	if path == "-" {
		_, err := stdout.Write(js)
		return err
	}
	if err := writeFileAtomic(path, js); err != nil {
		return fmt.Errorf("--metrics_out %w", err)
	}
	return nil
}

// writeRelease writes release to output and the report r to metricsOut,
// unless r is not valid: then it prints r's problems on stderr (as
// "smoothanon <command>: problem: ..."), writes the report alone, and
// returns an exit-1 error saying the release was not written.
// md is the release file's key/value metadata (nil for none).
func writeRelease(command string, release *matrix.Matrix, md map[string]string, r *smoothanonpb.RunReport, output, metricsOut string, stdout, stderr io.Writer) error {
	if !r.Valid {
		for _, pr := range r.Problems {
			fmt.Fprintf(stderr, "smoothanon %s: problem: %s\n", command, pr)
		}
		if err := writeReport(metricsOut, r, stdout); err != nil {
			return err
		}
		return &exitError{code: 1, err: fmt.Errorf("release failed verification; %s not written", output)}
	}
	if err := matrix.WriteMatrix(output, release, matrix.WriterOptions{Metadata: md}); err != nil {
		return inputErr(err)
	}
	return writeReport(metricsOut, r, stdout)
}
