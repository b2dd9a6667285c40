package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/storage"
)

// MarshalReport is the bytes WriteReport writes: indented protojson with
// every field. It is the form a job hands its report to the launcher in
// (StagedReport), not the one commands write (EncodeReport).
func MarshalReport(rep *smoothanonpb.RunReport) ([]byte, error) {
	b, err := protojson.MarshalOptions{Multiline: true, EmitUnpopulated: true}.Marshal(rep)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteReport writes rep to uri atomically and returns the hex SHA-256 of
// the bytes written.
func WriteReport(ctx context.Context, uri string, rep *smoothanonpb.RunReport) (string, error) {
	b, err := MarshalReport(rep)
	if err != nil {
		return "", err
	}
	if err := storage.WriteFile(ctx, uri, b); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// ReadReport reads a report written by WriteReport.
func ReadReport(ctx context.Context, uri string) (*smoothanonpb.RunReport, error) {
	b, err := storage.ReadFile(ctx, uri)
	if err != nil {
		return nil, err
	}
	rep, err := decodeReport(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	return rep, nil
}

// decodeReport decodes a report of either form (MarshalReport's or
// EncodeReport's), ignoring fields it does not know.
func decodeReport(b []byte) (*smoothanonpb.RunReport, error) {
	rep := &smoothanonpb.RunReport{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// EncodeReport is the run report as commands write it (--metrics_out):
// protojson with the proto field names and every field, indented.
func EncodeReport(rep *smoothanonpb.RunReport) ([]byte, error) {
	return EncodeJSON(rep)
}

// EncodeJSON is m as the reports' JSON: field names as in the .proto,
// every field (zeros too), one per line, 64-bit integers as strings
// (protojson).
func EncodeJSON(m proto.Message) ([]byte, error) {
	b, err := protojson.MarshalOptions{Multiline: true, UseProtoNames: true, EmitDefaultValues: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeReport writes the encoded report b to path: "" nowhere, "-"
// stdout, else a file or object, atomically.
func writeReport(ctx context.Context, path string, b []byte, stdout io.Writer) error {
	switch path {
	case "":
		return nil
	case "-":
		_, err := stdout.Write(b)
		return err
	}
	if err := storage.WriteFile(ctx, path, b); err != nil {
		return fmt.Errorf("--metrics_out %w", err)
	}
	return nil
}
