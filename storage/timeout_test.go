package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// testTimeout is the bound the fault tests set; every operation must fail
// within 3·testTimeout + 10 s, Probe within testTimeout + 3 s.
const testTimeout = time.Second

func setTimeout(t *testing.T, d time.Duration) {
	old := storage.Timeout()
	storage.SetTimeout(d)
	t.Cleanup(func() { storage.SetTimeout(old) })
}

// faultOp is one operation against a store that fails; uri is the URI its
// error must name.
type faultOp struct {
	name, uri string
	run       func(ctx context.Context) error
}

// faultOps are the operations checked against each fault, on objects of
// root.
func faultOps(root string) []faultOp {
	obj := root + "/obj.bin"
	return []faultOp{
		{"List", root + "/*.bin", func(ctx context.Context) error { _, err := storage.List(ctx, root+"/*.bin"); return err }},
		{"ListTree", root, func(ctx context.Context) error { _, err := storage.ListTree(ctx, root); return err }},
		{"ListTreeAttrs", root, func(ctx context.Context) error { _, err := storage.ListTreeAttrs(ctx, root); return err }},
		{"Stat", obj, func(ctx context.Context) error { _, err := storage.Stat(ctx, obj); return err }},
		{"Exists", obj, func(ctx context.Context) error { _, err := storage.Exists(ctx, obj); return err }},
		{"ReadFile", obj, func(ctx context.Context) error { _, err := storage.ReadFile(ctx, obj); return err }},
		{"ReadVersioned", obj, func(ctx context.Context) error { _, _, err := storage.ReadVersioned(ctx, obj); return err }},
		{"Open", obj, func(ctx context.Context) error { _, err := storage.Open(ctx, obj); return err }},
		{"Put", root + "/new.bin", func(ctx context.Context) error {
			return storage.Put(ctx, root+"/new.bin", []byte("new"), storage.Cond{})
		}},
		{"PutIfAbsent", root + "/claim", func(ctx context.Context) error {
			return storage.Put(ctx, root+"/claim", []byte("mine"), storage.Cond{IfAbsent: true})
		}},
		{"Copy", obj, func(ctx context.Context) error { return storage.Copy(ctx, obj, root+"/copy.bin") }},
		{"Remove", obj, func(ctx context.Context) error { return storage.Remove(ctx, obj) }},
		{"RemoveAll", root, func(ctx context.Context) error { return storage.RemoveAll(ctx, root) }},
		{"Probe", obj, func(ctx context.Context) error { return storage.Probe(ctx, obj) }},
	}
}

// checkFaults runs ops at once and checks that each fails with ErrTimeout,
// in one line naming its URI, within the bound.
func checkFaults(t *testing.T, ops []faultOp) {
	t.Helper()
	bound := 3*testTimeout + 10*time.Second
	probeBound := testTimeout + 3*time.Second
	// A hang beyond the bound shows as a context error, not ErrTimeout.
	ctx, cancel := context.WithTimeout(context.Background(), 2*bound)
	defer cancel()
	errs := make([]error, len(ops))
	took := make([]time.Duration, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Go(func() {
			start := time.Now()
			errs[i] = op.run(ctx)
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i, op := range ops {
		err, limit := errs[i], bound
		if op.name == "Probe" {
			limit = probeBound
		}
		switch {
		case !errors.Is(err, storage.ErrTimeout):
			t.Errorf("%s: %v, want ErrTimeout", op.name, err)
		case strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error of several lines: %q", op.name, err)
		case !strings.HasPrefix(err.Error(), op.uri+": the store does not answer ("):
			t.Errorf("%s: %q does not name %s", op.name, err, op.uri)
		case took[i] > limit:
			t.Errorf("%s: failed after %v, beyond the bound %v", op.name, took[i], limit)
		}
	}
	if !t.Failed() {
		t.Logf("e.g. %v", errs[0])
	}
}

// pointAt makes store's clients talk to addr (host:port) for the test.
func pointAt(t *testing.T, store, addr string) {
	switch store {
	case "gs":
		t.Setenv("STORAGE_EMULATOR_HOST", addr)
	case "s3":
		storagetest.StartS3(t) // the dummy credentials
		t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+addr)
	}
}

// closedPort is the address of a port nobody listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentListener accepts connections and never answers on them.
func silentListener(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestTimeoutNoStore: against a port that refuses connections and a
// listener that never answers, every operation fails within the bound
// with ErrTimeout, one line naming the URI.
func TestTimeoutNoStore(t *testing.T) {
	setTimeout(t, testTimeout)
	for _, store := range []string{"gs", "s3"} {
		for _, fault := range []struct {
			name string
			addr func(t *testing.T) string
		}{{"refused", closedPort}, {"silent", silentListener}} {
			t.Run(store+"/"+fault.name, func(t *testing.T) {
				pointAt(t, store, fault.addr(t))
				checkFaults(t, faultOps(store+"://bkt/dir"))
			})
		}
	}
}

// TestTimeoutProxy: a store that answers the first requests and then
// stalls, closes connections, or stops answers halfway through the body.
func TestTimeoutProxy(t *testing.T) {
	setTimeout(t, testTimeout)
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	for _, store := range []string{"gs", "s3"} {
		t.Run(store+"/stall", func(t *testing.T) {
			p := storagetest.StartProxy(t, store, "bkt")
			root := store + "://bkt/dir"
			if err := storage.Put(ctx, root+"/obj.bin", data, storage.Cond{}); err != nil {
				t.Fatal(err)
			}
			n := p.Requests()
			p.AfterRequests(1, storagetest.Stall)
			if _, err := storage.Stat(ctx, root+"/obj.bin"); err != nil {
				t.Fatalf("the request before the stall: %v", err)
			}
			checkFaults(t, faultOps(root))
			if p.Requests() <= n+1 {
				t.Fatalf("the proxy saw %d requests after the first", p.Requests()-n-1)
			}
			// A Remove that timed out must not reach the store after Pass.
			for deadline := time.Now().Add(10 * time.Second); p.Held() > 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the proxy still holds %d requests of clients that gave up", p.Held())
				}
			}
			p.Pass()
			if b, err := storage.ReadFile(ctx, root+"/obj.bin"); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("after Pass: %v", err)
			}
		})
		t.Run(store+"/refuse", func(t *testing.T) {
			p := storagetest.StartProxy(t, store, "bkt")
			root := store + "://bkt/dir"
			if err := storage.Put(ctx, root+"/obj.bin", data, storage.Cond{}); err != nil {
				t.Fatal(err)
			}
			p.Refuse()
			checkFaults(t, faultOps(root))
		})
		t.Run(store+"/stall-body", func(t *testing.T) {
			p := storagetest.StartProxy(t, store, "bkt")
			root := store + "://bkt/dir"
			obj := root + "/obj.bin"
			if err := storage.Put(ctx, obj, data, storage.Cond{}); err != nil {
				t.Fatal(err)
			}
			// The File reads with the context it was opened with: a hang
			// beyond the bound shows as its error, not ErrTimeout.
			fctx, cancel := context.WithTimeout(ctx, 2*(3*testTimeout+10*time.Second))
			defer cancel()
			f, err := storage.Open(fctx, obj)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p.StallBody()
			checkFaults(t, []faultOp{
				{"ReadFile", obj, func(ctx context.Context) error { _, err := storage.ReadFile(ctx, obj); return err }},
				{"ReadVersioned", obj, func(ctx context.Context) error { _, _, err := storage.ReadVersioned(ctx, obj); return err }},
				{"ReadAt", obj, func(ctx context.Context) error {
					_, err := f.ReadAt(make([]byte, len(data)/2), 1000)
					return err
				}},
			})
		})
	}
}

// TestProxyRelease: Pass lets a held request through at once; the
// operation that sent it succeeds if it was held less than the timeout.
func TestProxyRelease(t *testing.T) {
	setTimeout(t, 10*time.Second)
	ctx := context.Background()
	for _, store := range []string{"gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			p := storagetest.StartProxy(t, store, "bkt")
			uri := store + "://bkt/x"
			if err := storage.Put(ctx, uri, []byte("held"), storage.Cond{}); err != nil {
				t.Fatal(err)
			}
			p.Stall()
			n := p.Requests()
			done := make(chan error)
			go func() {
				_, err := storage.ReadFile(ctx, uri)
				done <- err
			}()
			for p.Requests() == n {
				time.Sleep(10 * time.Millisecond)
			}
			select {
			case err := <-done:
				t.Fatalf("a stalled read returned: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			p.Pass()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("released read: %v", err)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the held request was not released by Pass")
			}
			if got := p.Requests() - n; got != 1 {
				t.Fatalf("the read sent %d requests, want 1 (held, then released)", got)
			}
		})
	}
}

// refusing is a store that answers every request with status.
func refusing(t *testing.T, status int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			fmt.Fprintf(w, `{"error":{"code":%d,"message":"refused by the test"}}`, status)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestProbe: Probe tells a store that lets us in from a missing bucket,
// a refusal of the credentials or the request, and a missing local
// directory; refusals are answers, quick and not ErrTimeout.
func TestProbe(t *testing.T) {
	setTimeout(t, 5*time.Second)
	ctx := context.Background()
	for _, store := range []string{"gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			storagetest.Start(t, store, "bkt")
			if err := storage.Probe(ctx, store+"://bkt/some/prefix"); err != nil {
				t.Errorf("Probe of a bucket: %v", err)
			}
			err := storage.Probe(ctx, store+"://nobkt/x")
			if !errors.Is(err, storage.ErrNoBucket) || err.Error() != store+"://nobkt/x: no such bucket" {
				t.Errorf("Probe of a missing bucket: %v", err)
			}
		})
		for _, c := range []struct {
			status int
			want   error
		}{{http.StatusForbidden, storage.ErrPermission}, {http.StatusUnauthorized, storage.ErrNoCredentials}} {
			t.Run(fmt.Sprintf("%s/%d", store, c.status), func(t *testing.T) {
				pointAt(t, store, refusing(t, c.status))
				start := time.Now()
				err := storage.Probe(ctx, store+"://bkt/x")
				if !errors.Is(err, c.want) || errors.Is(err, storage.ErrTimeout) || !strings.HasPrefix(err.Error(), store+"://bkt/x: ") {
					t.Errorf("Probe answered %d: %v, want %v", c.status, err, c.want)
				}
				if took := time.Since(start); took > time.Second {
					t.Errorf("Probe answered %d took %v", c.status, took)
				}
			})
		}
	}
	for _, store := range []string{"gs", "s3"} {
		t.Run(store+"/stalled", func(t *testing.T) {
			setTimeout(t, testTimeout)
			p := storagetest.StartProxy(t, store, "bkt")
			p.Stall()
			start := time.Now()
			err := storage.Probe(ctx, store+"://bkt/x")
			if took := time.Since(start); !errors.Is(err, storage.ErrTimeout) || took > testTimeout+3*time.Second {
				t.Errorf("Probe of a stalled store: %v after %v", err, took)
			}
			if n := p.Requests(); n != 1 {
				t.Errorf("Probe sent %d requests, want 1", n)
			}
		})
	}
	t.Run("local", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "f")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			path string
			ok   bool
		}{{dir, true}, {filepath.Join(dir, "new", "deeper", "out"), true}, {file, true}, {filepath.Join(file, "x"), false}} {
			if err := storage.Probe(ctx, c.path); (err == nil) != c.ok {
				t.Errorf("Probe(%s) = %v, want ok %v", c.path, err, c.ok)
			}
		}
	})
	t.Run("memfs", func(t *testing.T) {
		if err := storage.Probe(ctx, "memfs://x/y"); err != nil {
			t.Errorf("Probe(memfs) = %v", err)
		}
	})
}
