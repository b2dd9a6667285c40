package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTimeout is the wait bound of SetTimeout until it is called.
const DefaultTimeout = 60 * time.Second

// maxAttempts is how many requests an operation sends at most for one
// step (the first and two retries), and how many unanswered requests it
// suffers in all before it gives up.
const maxAttempts = 3

var timeout atomic.Int64

func init() { timeout.Store(int64(DefaultTimeout)) }

// SetTimeout sets d, the bound on every wait for a bucket (gs://, s3://):
// connecting, the answer's headers after a request is sent, and each
// stretch of a transfer without progress. A request that waits longer
// fails; an operation makes at most three attempts, so against a store
// that refuses connections or never answers it fails within 3·d + 10 s
// with an error matching ErrTimeout. d <= 0 restores DefaultTimeout. It is
// meant to be set once, before the first operation (the CLI sets it from a
// flag); later operations use the new bound.
func SetTimeout(d time.Duration) {
	if d <= 0 {
		d = DefaultTimeout
	}
	timeout.Store(int64(d))
}

// Timeout returns the bound set by SetTimeout.
func Timeout() time.Duration { return time.Duration(timeout.Load()) }

// noAnswer is a request the store did not answer: the connection was
// refused or dropped, or nothing came back within the timeout. It tells
// the clients' retry logic to try again unless the operation has used up
// its attempts (final).
type noAnswer struct {
	detail string
	final  bool
}

func (e *noAnswer) Error() string { return e.detail }

// Timeout, Temporary, ConnectionError and RetryableError are what the GCS
// and AWS clients ask of a transport error before they retry it.
func (e *noAnswer) Timeout() bool         { return true }
func (e *noAnswer) Temporary() bool       { return !e.final }
func (e *noAnswer) ConnectionError() bool { return !e.final }
func (e *noAnswer) RetryableError() bool  { return !e.final }

// retryable is the GCS client's retry predicate: unanswered requests
// until the operation has used up its attempts, and what the client
// retries by default.
func retryable(err error) bool {
	var na *noAnswer
	if errors.As(err, &na) {
		return !na.final
	}
	return defaultRetryGCS(err)
}

// op counts the unanswered requests of one storage operation (the outer
// call into this package): after maxAttempts of them every further
// request of the operation fails at once, whatever retry loop a client
// runs (the GCS reader reopens a broken download without a limit).
type op struct {
	mu    sync.Mutex
	fails int
	last  *noAnswer
}

type opKey struct{}

// beginOp returns ctx carrying the operation counter, a new one unless
// ctx is already inside an operation.
func beginOp(ctx context.Context) context.Context {
	if _, ok := ctx.Value(opKey{}).(*op); ok {
		return ctx
	}
	return newOp(ctx)
}

// newOp returns ctx carrying a new operation counter (a File's ranged
// read is an operation of its own).
func newOp(ctx context.Context) context.Context {
	return context.WithValue(ctx, opKey{}, &op{})
}

func opOf(ctx context.Context) *op {
	o, _ := ctx.Value(opKey{}).(*op)
	return o
}

// fail records an unanswered request and returns the error to report.
func (o *op) fail(e *noAnswer) *noAnswer {
	if o == nil {
		return e
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fails++
	if o.fails >= maxAttempts {
		e.final = true
	}
	o.last = e
	return e
}

// exhausted returns the last failure once the operation may send no more.
func (o *op) exhausted() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fails >= maxAttempts {
		return &noAnswer{detail: o.last.detail, final: true}
	}
	return nil
}

// boundedTransport bounds every wait of a request by d: it is an
// http.Transport with a dial, TLS handshake and response header timeout
// of d, and a watchdog that cancels the request when no progress is made
// for d: from the start until the request body is being read, between two
// reads of the request body, until the answer's headers, and during each
// read of the answer's body.
type boundedTransport struct {
	base *http.Transport
	d    time.Duration
}

func newTransport(d time.Duration) *boundedTransport {
	dialer := &net.Dialer{Timeout: d, KeepAlive: 30 * time.Second}
	return &boundedTransport{d: d, base: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   d,
		ResponseHeaderTimeout: d,
		ExpectContinueTimeout: time.Second,
		// An HTTP/2 connection that goes silent is pinged after d and
		// closed when the ping is not answered within d, so requests do
		// not keep landing on a dead connection.
		HTTP2: &http.HTTP2Config{SendPingTimeout: d, PingTimeout: d},
	}}
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	o := opOf(req.Context())
	if err := o.exhausted(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	wd := newWatchdog(t.d, cancel)
	out := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		out.Body = &sendBody{rc: req.Body, wd: wd}
		if get := req.GetBody; get != nil {
			out.GetBody = func() (io.ReadCloser, error) {
				b, err := get()
				if err != nil {
					return nil, err
				}
				return &sendBody{rc: b, wd: wd}, nil
			}
		}
	}
	wd.arm()
	resp, err := t.base.RoundTrip(out)
	fired := wd.answered()
	if err != nil {
		cancel()
		if req.Context().Err() != nil {
			return nil, err // the caller gave up
		}
		return nil, o.fail(t.describe(err, fired, false))
	}
	resp.Body = &recvBody{rc: resp.Body, wd: wd, cancel: cancel, parent: req.Context(), t: t, o: o}
	return resp, nil
}

// describe names why a request got no answer, in a few words.
func (t *boundedTransport) describe(err error, fired, body bool) *noAnswer {
	var ne net.Error
	switch {
	case fired && body:
		return &noAnswer{detail: fmt.Sprintf("no data for %v", t.d)}
	case fired || errors.As(err, &ne) && ne.Timeout():
		return &noAnswer{detail: fmt.Sprintf("no answer within %v", t.d)}
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return &noAnswer{detail: "connection closed without an answer"}
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return &noAnswer{detail: oneLine(oe.Error())}
	}
	return &noAnswer{detail: oneLine(err.Error())}
}

// watchdog cancels a request when armed for d without being disarmed.
type watchdog struct {
	mu       sync.Mutex
	timer    *time.Timer
	d        time.Duration
	fired    bool
	response bool // the headers are in: the request body no longer arms it
}

func newWatchdog(d time.Duration, cancel func()) *watchdog {
	w := &watchdog{d: d}
	w.timer = time.AfterFunc(time.Hour, func() {
		w.mu.Lock()
		w.fired = true
		w.mu.Unlock()
		cancel()
	})
	w.timer.Stop()
	return w
}

func (w *watchdog) arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.fired {
		w.timer.Reset(w.d)
	}
}

func (w *watchdog) disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer.Stop()
}

// sendPaused and sendResumed bracket a read of the request body: the
// transport is making progress while it reads.
func (w *watchdog) sendPaused() { w.disarm() }

func (w *watchdog) sendResumed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.fired && !w.response {
		w.timer.Reset(w.d)
	}
}

// answered stops the wait for the headers and reports whether it fired.
func (w *watchdog) answered() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer.Stop()
	w.response = true
	return w.fired
}

func (w *watchdog) hasFired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

type sendBody struct {
	rc io.ReadCloser
	wd *watchdog
}

func (b *sendBody) Read(p []byte) (int, error) {
	b.wd.sendPaused()
	defer b.wd.sendResumed()
	return b.rc.Read(p)
}

func (b *sendBody) Close() error { return b.rc.Close() }

// recvBody is an answer's body: each read must bring data within d.
type recvBody struct {
	rc     io.ReadCloser
	wd     *watchdog
	cancel context.CancelFunc
	parent context.Context
	t      *boundedTransport
	o      *op
}

func (b *recvBody) Read(p []byte) (int, error) {
	b.wd.arm()
	n, err := b.rc.Read(p)
	b.wd.disarm()
	if err != nil && err != io.EOF && !errors.Is(err, http.ErrBodyReadAfterClose) && b.parent.Err() == nil {
		err = b.o.fail(b.t.describe(err, b.wd.hasFired(), true))
	}
	return n, err
}

func (b *recvBody) Close() error {
	b.wd.disarm()
	err := b.rc.Close()
	b.cancel()
	return err
}
