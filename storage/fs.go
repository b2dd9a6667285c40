package storage

import (
	"context"
	"os"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	// The stores this package reaches through Beam's registry: memfs://
	// (and local paths, for Beam code that opens them by the registry).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
)

// clients caches one client per key: a Beam filesystem or a native client
// per scheme, emulator endpoint and timeout (tests start several emulators
// in one process; a client is bound to the endpoint and the timeout it was
// made for).
type clients[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

func (c *clients[T]) get(key string, make func() (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[key]; ok {
		return v, nil
	}
	v, err := make()
	if err != nil {
		return v, err
	}
	if c.m == nil {
		c.m = map[string]T{}
	}
	c.m[key] = v
	return v, nil
}

// endpointKey names the endpoint the scheme's clients talk to, and the
// timeout their transport applies.
func endpointKey(scheme string) string {
	switch scheme {
	case SchemeGCS:
		return scheme + "|" + os.Getenv("STORAGE_EMULATOR_HOST") + "|" + Timeout().String()
	case SchemeS3:
		return scheme + "|" + os.Getenv("AWS_ENDPOINT_URL_S3") + "|" + os.Getenv("AWS_ENDPOINT_URL") + "|" + Timeout().String()
	}
	return scheme
}

var beamFS clients[filesystem.Interface]

// fsFor returns Beam's filesystem for uri's scheme (memfs).
func fsFor(ctx context.Context, uri string) (filesystem.Interface, error) {
	return beamFS.get(endpointKey(Scheme(uri)), func() (filesystem.Interface, error) {
		fs, err := filesystem.New(ctx, uri)
		if err != nil {
			return nil, &Error{URI: uri, Err: err}
		}
		return fs, nil
	})
}

// checkStore makes sure a client for uri's store can be made, so a write
// fails before anything is spooled.
func checkStore(ctx context.Context, uri string) error {
	var err error
	switch Scheme(uri) {
	case SchemeGCS:
		_, err = gcsClientFor(ctx)
	case SchemeS3:
		_, err = s3ClientFor(ctx)
	default:
		_, err = fsFor(ctx, uri)
	}
	return wrap(uri, err)
}
