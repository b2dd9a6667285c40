// Package storagetest starts in-process emulators of Google Cloud Storage
// (fake-gcs-server) and S3 (gofakes3) on loopback and points this
// process's clients at them through the standard environment variables,
// so tests of gs:// and s3:// paths run offline.
package storagetest

import (
	"net"
	"net/http"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// GCS is a running fake GCS server.
type GCS struct {
	*fakestorage.Server
	// Addr is the host:port it listens on, STORAGE_EMULATOR_HOST.
	Addr string
}

// StartGCS starts a fake GCS server holding the given buckets, sets
// STORAGE_EMULATOR_HOST for the test, and stops the server at its end.
func StartGCS(t testing.TB, buckets ...string) *GCS {
	t.Helper()
	l := listen(t)
	g := startGCS(t, l, l.Addr().String(), buckets)
	t.Setenv("STORAGE_EMULATOR_HOST", g.Addr)
	return g
}

// startGCS serves a fake GCS server on l; publicHost is the host:port its
// clients address (the server answers XML reads only there).
func startGCS(t testing.TB, l net.Listener, publicHost string, buckets []string) *GCS {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, Scheme: "http", PublicHost: publicHost})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, l, srv.HTTPHandler())
	for _, b := range buckets {
		srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	return &GCS{Server: srv, Addr: l.Addr().String()}
}

// S3 is a running fake S3 server.
type S3 struct {
	Backend *s3mem.Backend
	// Endpoint is its URL, AWS_ENDPOINT_URL_S3; an IP address, so clients
	// address buckets by path.
	Endpoint string
}

// StartS3 starts a fake S3 server holding the given buckets, points the
// AWS default chain at it with dummy static credentials for the test, and
// stops the server at its end.
func StartS3(t testing.TB, buckets ...string) *S3 {
	t.Helper()
	be := s3mem.New()
	for _, b := range buckets {
		if err := be.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	l := listen(t)
	serve(t, l, gofakes3.New(be).Server())
	endpoint := "http://" + l.Addr().String()
	t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return &S3{Backend: be, Endpoint: endpoint}
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func serve(t testing.TB, l net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

// Start starts the fake store of scheme ("gs" or "s3") holding buckets,
// for tests that run once per object store.
func Start(t testing.TB, scheme string, buckets ...string) {
	t.Helper()
	switch scheme {
	case "gs":
		StartGCS(t, buckets...)
	case "s3":
		StartS3(t, buckets...)
	default:
		t.Fatalf("storagetest: no fake object store for scheme %q", scheme)
	}
}
