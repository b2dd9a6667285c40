package experiment

import (
	"context"

	"github.com/smoothanon/smoothanon/storage"
)

// WriteFile writes data to path (a local path or a bucket URI) whole:
// readers see the old file or the new one, never a half-written one
// (storage.WriteFile, the project's one atomic writer).
func WriteFile(path string, data []byte) error {
	return storage.WriteFile(context.Background(), path, data)
}
