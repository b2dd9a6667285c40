package workerexit

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWatchParent(t *testing.T) {
	old := watchEvery
	watchEvery = time.Millisecond
	t.Cleanup(func() { watchEvery = old })

	var ppid atomic.Int64
	ppid.Store(42)
	exited := make(chan struct{})
	watchParent(42, func() int { return int(ppid.Load()) }, func() { close(exited) })
	select {
	case <-exited:
		t.Fatal("exit called while the parent lives")
	case <-time.After(50 * time.Millisecond):
	}
	ppid.Store(1) // re-parented to init: the parent died
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("exit not called after the parent changed")
	}
}
