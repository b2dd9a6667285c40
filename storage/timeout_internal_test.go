package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// slowReader yields n bytes, one every gap.
type slowReader struct {
	n   int
	gap time.Duration
}

func (r *slowReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.gap)
	r.n--
	p[0] = 'x'
	return 1, nil
}

// TestTransportProgress: the bound is on waiting without progress, not on
// the length of a transfer: a body that trickles in (or out) slower than
// the bound in all, but faster than it byte to byte, goes through; one
// that stops, an answer that never comes, a peer that stops reading a
// request body fail after the bound with a noAnswer naming the cause.
func TestTransportProgress(t *testing.T) {
	const d = 400 * time.Millisecond
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/trickle":
			for range 8 {
				w.Write([]byte("x"))
				w.(http.Flusher).Flush()
				time.Sleep(d / 3)
			}
		case "/stall-body":
			w.Header().Set("Content-Length", "10")
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		case "/silent", "/no-read":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		case "/upload":
			n, _ := io.Copy(io.Discard, r.Body)
			w.Write([]byte(strings.Repeat("x", int(n))))
		}
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for the handlers
	c := &http.Client{Transport: newTransport(d)}

	get := func(path string, body io.Reader) ([]byte, time.Duration, error) {
		start := time.Now()
		method := http.MethodGet
		if body != nil {
			method = http.MethodPost
		}
		// A hang shows as the context's error, not a noAnswer.
		ctx, cancel := context.WithTimeout(context.Background(), 10*d)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, time.Since(start), err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return b, time.Since(start), err
	}

	if b, took, err := get("/trickle", nil); err != nil || len(b) != 8 || took < 2*d {
		t.Errorf("trickling answer: %d bytes in %v, %v; want 8 bytes in more than %v", len(b), took, err, 2*d)
	}
	if b, took, err := get("/upload", &slowReader{n: 8, gap: d / 3}); err != nil || len(b) != 8 || took < 2*d {
		t.Errorf("trickling upload: %d bytes in %v, %v; want 8 bytes in more than %v", len(b), took, err, 2*d)
	}
	for _, c := range []struct {
		path string
		body io.Reader
		want string
	}{
		{"/stall-body", nil, "no data for 400ms"},
		{"/silent", nil, "no answer within 400ms"},
		// More than the socket buffers hold, to a handler that never reads.
		{"/no-read", bytes.NewReader(make([]byte, 64<<20)), "no answer within 400ms"},
	} {
		_, took, err := get(c.path, c.body)
		var na *noAnswer
		if !errors.As(err, &na) || na.detail != c.want || took > 3*d {
			t.Errorf("%s: %v after %v; want %q within %v", c.path, err, took, c.want, 3*d)
		}
	}
}

// TestOpGivesUp: after maxAttempts unanswered requests an operation sends
// no more: the next request fails at once, retry loops of the clients
// notwithstanding.
func TestOpGivesUp(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	var served int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	defer srv.Close()

	c := &http.Client{Transport: newTransport(time.Second)}
	ctx := newOp(context.Background())
	do := func(url string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for i := range maxAttempts {
		err := do(closed)
		var na *noAnswer
		if !errors.As(err, &na) || na.final != (i == maxAttempts-1) {
			t.Fatalf("attempt %d: %v (final %v)", i+1, err, na != nil && na.final)
		}
	}
	if err := do(srv.URL); err == nil || served != 0 {
		t.Fatalf("after %d unanswered requests: %v, %d served; want a failure sent nowhere", maxAttempts, err, served)
	}
	if err := do(srv.URL); !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("the failure of a spent operation is %v, want its last cause", err)
	}
	// A new operation starts afresh.
	req, _ := http.NewRequestWithContext(newOp(context.Background()), http.MethodGet, srv.URL, nil)
	if resp, err := c.Do(req); err != nil || served != 1 {
		t.Fatalf("a new operation: %v, %d served", err, served)
	} else {
		resp.Body.Close()
	}
}
