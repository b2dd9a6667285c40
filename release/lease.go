package release

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/smoothanon/smoothanon/storage"
)

// A run holds a lease on its staging for as long as it lives, so that a
// later run can tell a dead run's staging (removed) from a live one's
// (never touched). On a local disk the lease is an exclusive flock on
// staging/_LEASE: the kernel drops it when the process dies, whatever
// killed it. On a bucket it is the object staging/_LEASE holding an
// expiry, renewed every LeaseTTL/5 by a compare-and-swap on its version;
// a sweep breaks an expired lease by the same compare-and-swap, so a
// renewal and a break never both succeed. A run whose renewal finds the
// lease broken stops (errLeaseLost).

// LeaseTTL is how long a bucket lease lasts unrenewed. A run stalled
// longer (a suspended launcher) loses its staging; a dead run's staging is
// removed by the first run after this long. Clocks of the hosts running
// smoothanon must agree to well within it. Tests shorten it.
var LeaseTTL = 10 * time.Minute

// leaseGrace is how old a local staging without its lease file must be
// before a sweep takes it for dead (its run may be between making the
// directory and locking the file).
var leaseGrace = time.Minute

// leaseInfo is the lease's content, for the sweeps and for people.
type leaseInfo struct {
	RunID   string    `json:"run_id"`
	Token   string    `json:"token"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Expires time.Time `json:"expires,omitzero"`
	Broken  bool      `json:"broken,omitempty"`
}

// lease is a run's hold on its staging.
type lease struct {
	uri  string
	lock *storage.Lock // local disk
	info leaseInfo
	// bucket: the version of the lease object last written, and the
	// renewing goroutine.
	version string
	stop    chan struct{}
	done    sync.WaitGroup
}

// takeLease creates staging (with the directory the job writes its
// shards into) and its lease; lost is called once if a bucket lease is
// lost later.
func takeLease(ctx context.Context, staging, runID, token string, lost func(error)) (*lease, error) {
	if err := storage.MkdirAll(StagedShards(staging)); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	l := &lease{uri: storage.Join(staging, leaseName), info: leaseInfo{RunID: runID, Token: token, Host: host, PID: os.Getpid()}}
	if storage.IsLocal(staging) {
		b, _ := json.Marshal(l.info)
		lock, err := storage.LockFile(l.uri, b)
		if err != nil {
			return nil, err
		}
		l.lock = lock
		return l, nil
	}
	l.info.Expires = time.Now().Add(LeaseTTL)
	b, _ := json.Marshal(l.info)
	if err := storage.Put(ctx, l.uri, b, storage.Cond{IfAbsent: true}); err != nil {
		return nil, err
	}
	v, err := l.readOwn(ctx)
	if err != nil {
		return nil, err
	}
	l.version, l.stop = v, make(chan struct{})
	l.done.Add(1)
	go l.renew(context.WithoutCancel(ctx), l.stop, lost)
	return l, nil
}

// readOwn reads the lease object back and returns its version, failing if
// it is no longer this run's.
func (l *lease) readOwn(ctx context.Context) (string, error) {
	b, a, err := storage.ReadVersioned(ctx, l.uri)
	if err != nil {
		return "", err
	}
	var got leaseInfo
	if json.Unmarshal(b, &got) != nil || got.Token != l.info.Token || got.Broken {
		return "", errLeaseLost
	}
	return a.Version, nil
}

// renew extends a bucket lease until release; it calls lost when the
// lease was broken or could not be renewed before it expired.
func (l *lease) renew(ctx context.Context, stop <-chan struct{}, lost func(error)) {
	defer l.done.Done()
	t := time.NewTicker(LeaseTTL / 5)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		info := l.info
		info.Expires = time.Now().Add(LeaseTTL)
		b, _ := json.Marshal(info)
		err := storage.Put(ctx, l.uri, b, storage.Cond{IfVersion: l.version})
		if err == nil {
			var v string
			if v, err = l.readOwn(ctx); err == nil {
				l.info, l.version = info, v
				continue
			}
		}
		if errors.Is(err, storage.ErrConflict) || errors.Is(err, errLeaseLost) || time.Now().After(l.info.Expires) {
			lost(errLeaseLost)
			return
		}
		// A store that did not answer: try again at the next tick.
	}
}

// release ends the lease: the flock is dropped, the renewals stop. The
// staging itself is removed by the caller.
func (l *lease) release() {
	if l == nil {
		return
	}
	l.lock.Release()
	if l.stop != nil {
		close(l.stop)
		l.stop = nil
		l.done.Wait()
	}
}

// stagingDead reports whether the staging's run is gone: on a local disk,
// nobody holds its lease's flock; on a bucket, its lease expired and this
// call broke it (or it has no lease and nothing in it was written within
// LeaseTTL).
func stagingDead(ctx context.Context, staging string) (bool, error) {
	uri := storage.Join(staging, leaseName)
	if storage.IsLocal(staging) {
		live, err := storage.IsLive(uri)
		if err != nil || live {
			return false, err
		}
		if _, err := os.Stat(uri); err == nil {
			return true, nil
		}
		st, err := os.Stat(staging)
		if err != nil {
			return errors.Is(err, os.ErrNotExist), nil
		}
		return time.Since(st.ModTime()) > leaseGrace, nil
	}
	b, a, err := storage.ReadVersioned(ctx, uri)
	if errors.Is(err, storage.ErrNotExist) {
		newest, err := newestWrite(ctx, staging)
		return err == nil && time.Since(newest) > LeaseTTL, err
	}
	if err != nil {
		return false, err
	}
	var info leaseInfo
	if json.Unmarshal(b, &info) == nil && !info.Broken && time.Now().Before(info.Expires) {
		return false, nil
	}
	info.Broken = true
	nb, _ := json.Marshal(info)
	switch err := storage.Put(ctx, uri, nb, storage.Cond{IfVersion: a.Version}); {
	case errors.Is(err, storage.ErrConflict):
		return false, nil // renewed in the meantime
	case err != nil:
		return false, err
	}
	return true, nil
}

// newestWrite is the latest update time of the objects under prefix.
func newestWrite(ctx context.Context, prefix string) (time.Time, error) {
	objs, err := storage.ListTree(ctx, prefix)
	if err != nil {
		return time.Time{}, err
	}
	var newest time.Time
	for _, o := range objs {
		a, err := storage.Stat(ctx, o)
		if errors.Is(err, storage.ErrNotExist) {
			continue
		}
		if err != nil {
			return time.Time{}, err
		}
		if a.Updated.After(newest) {
			newest = a.Updated
		}
	}
	return newest, nil
}
