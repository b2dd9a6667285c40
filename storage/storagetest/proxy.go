package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Mode is what a Proxy does with the requests it receives.
type Mode int

const (
	// Pass forwards requests to the emulator and its answers back.
	Pass Mode = iota
	// Refuse closes a request's connection without an answer.
	Refuse
	// Stall holds a request unanswered until the mode changes (the
	// request is then handled as if it had just arrived), its client
	// gives up, or the test ends (its connection is then closed).
	Stall
	// StallBody forwards a request, sends back the answer's status,
	// headers and the first half of a body of known length (nothing of a
	// body of unknown length), then holds the rest until the mode changes
	// (the rest follows), the client gives up or the test ends (the
	// connection is closed).
	StallBody
)

func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case Refuse:
		return "refuse"
	case Stall:
		return "stall"
	case StallBody:
		return "stall-body"
	}
	return "mode?"
}

// Proxy is an HTTP reverse proxy in front of an emulator that fails on
// demand, to kill or stall a run at an exact request. StartProxy points
// the clients at it; it starts in Pass mode. Every method is safe to call
// from any goroutine; held requests are released when the test ends, so
// a test never hangs on it.
//
//	p := storagetest.StartProxy(t, "gs", "bkt")
//	p.AfterRequests(2, storagetest.Stall) // the next 2 requests pass, then all stall
//	...
//	p.Pass() // held requests go through
type Proxy struct {
	// Addr is the proxy's host:port.
	Addr string
	// GCS or S3 is the emulator behind the proxy (the other is nil); set
	// up or inspect objects there to bypass the proxy.
	GCS *GCS
	S3  *S3

	rp   *httputil.ReverseProxy
	done chan struct{} // closed when the test ends

	mu       sync.Mutex
	mode     Mode
	passLeft int  // requests still to forward before mode then
	then     Mode // the mode after passLeft requests
	requests int
	held     int           // requests waiting in Stall mode now
	changed  chan struct{} // closed and replaced at every mode change
}

// StartProxy starts the emulator of scheme ("gs" or "s3") holding buckets
// and a Proxy in front of it, and points the clients at the proxy
// (STORAGE_EMULATOR_HOST or AWS_ENDPOINT_URL_S3) for the test.
func StartProxy(t testing.TB, scheme string, buckets ...string) *Proxy {
	t.Helper()
	l := listen(t)
	p := &Proxy{Addr: l.Addr().String(), done: make(chan struct{}), changed: make(chan struct{})}
	var target string
	switch scheme {
	case "gs":
		// The emulator answers XML reads only on its public host: the
		// proxy's, which the clients send as Host.
		p.GCS = startGCS(t, listen(t), p.Addr, buckets)
		target = "http://" + p.GCS.Addr
	case "s3":
		p.S3 = StartS3(t, buckets...)
		target = p.S3.Endpoint
	default:
		t.Fatalf("storagetest: no fake object store for scheme %q", scheme)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host // signed by S3 clients, matched by fake-gcs-server
		},
		FlushInterval:  -1,
		ModifyResponse: p.stallBody,
		ErrorLog:       log.New(io.Discard, "", 0),
	}
	srv := &http.Server{Handler: p, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(l)
	t.Cleanup(func() {
		close(p.done)
		srv.Close()
	})
	if scheme == "gs" {
		t.Setenv("STORAGE_EMULATOR_HOST", p.Addr)
	} else {
		t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+p.Addr)
	}
	return p
}

// Pass forwards every request from now on (held ones too).
func (p *Proxy) Pass() { p.set(Pass) }

// Refuse closes the connection of every request from now on (held ones
// too).
func (p *Proxy) Refuse() { p.set(Refuse) }

// Stall holds every request from now on.
func (p *Proxy) Stall() { p.set(Stall) }

// StallBody forwards every request from now on and holds the second half
// of its answer's body.
func (p *Proxy) StallBody() { p.set(StallBody) }

// AfterRequests forwards the next n requests (whatever the mode) and
// handles every later one by mode m.
func (p *Proxy) AfterRequests(n int, m Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n <= 0 {
		p.setLocked(m)
		return
	}
	p.passLeft, p.then = n, m
	p.notifyLocked()
}

// Held is how many requests the proxy holds now. A held request whose
// client gave up is dropped as soon as the server sees its connection
// close: wait for Held to reach 0 before Pass when such a request must
// not reach the store late (a Remove that timed out, say).
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// Requests is how many requests the proxy has received.
func (p *Proxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

func (p *Proxy) set(m Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(m)
}

func (p *Proxy) setLocked(m Mode) {
	p.mode, p.passLeft = m, 0
	p.notifyLocked()
}

func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// next decides the mode of a request and returns the channel that is
// closed when the decision may change.
func (p *Proxy) next() (Mode, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.passLeft > 0 {
		p.passLeft--
		if p.passLeft == 0 {
			p.mode = p.then
			p.notifyLocked()
		}
		return Pass, p.changed
	}
	return p.mode, p.changed
}

type stallBodyKey struct{}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.requests++
	p.mu.Unlock()
	// The server sees a client close its connection only once the
	// request's body is read: read it now, so that a held request whose
	// client gave up is dropped rather than forwarded later.
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			closeConn(w)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	for {
		m, changed := p.next()
		switch m {
		case Pass:
			p.rp.ServeHTTP(w, r)
			return
		case StallBody:
			p.rp.ServeHTTP(flushingWriter{w}, r.WithContext(context.WithValue(r.Context(), stallBodyKey{}, true)))
			return
		case Refuse:
			closeConn(w)
			return
		}
		if !p.hold(r.Context(), changed) {
			closeConn(w)
			return
		}
	}
}

// hold waits in Stall mode until the mode may have changed (true), or
// the client gives up or the test ends (false).
func (p *Proxy) hold(ctx context.Context, changed <-chan struct{}) bool {
	p.mu.Lock()
	p.held++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.held--
		p.mu.Unlock()
	}()
	select {
	case <-changed:
		return true
	case <-ctx.Done():
		return false
	case <-p.done:
		return false
	}
}

// closeConn closes the connection of a request without an answer.
func closeConn(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// stallBody makes the body of an answer in StallBody mode stop halfway.
func (p *Proxy) stallBody(resp *http.Response) error {
	ctx := resp.Request.Context()
	if ctx.Value(stallBodyKey{}) == nil {
		return nil
	}
	resp.Body = &stallingBody{rc: resp.Body, left: max(resp.ContentLength/2, 0), p: p, ctx: ctx}
	return nil
}

type stallingBody struct {
	rc   io.ReadCloser
	left int64
	p    *Proxy
	ctx  context.Context
	free bool
}

var errHeld = errors.New("storagetest: answer held until the end of the test")

func (b *stallingBody) Read(buf []byte) (int, error) {
	for !b.free && b.left == 0 {
		p := b.p
		p.mu.Lock()
		mode, changed := p.mode, p.changed
		p.mu.Unlock()
		if mode != StallBody {
			b.free = true
			break
		}
		select {
		case <-changed:
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		case <-p.done:
			return 0, errHeld
		}
	}
	if !b.free && int64(len(buf)) > b.left {
		buf = buf[:b.left]
	}
	n, err := b.rc.Read(buf)
	if !b.free {
		b.left -= int64(n)
	}
	return n, err
}

func (b *stallingBody) Close() error { return b.rc.Close() }

// flushingWriter sends the headers as soon as they are written, so a
// client sees the answer begin before its body stalls.
type flushingWriter struct{ http.ResponseWriter }

func (w flushingWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(code)
	if code >= 200 {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w flushingWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w flushingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
