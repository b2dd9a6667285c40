// Package par runs loops over index ranges, and sorts, on several
// goroutines, for the solver and its neighbour search.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers is the number of goroutines for a requested count w: w itself,
// or GOMAXPROCS when w ≤ 0.
func Workers(w int) int {
	if w <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return w
}

// For runs fn over [0, n) in chunks of chunk indices on up to workers
// goroutines (one when workers ≤ 1 or there is a single chunk) and returns
// when all are done. fn gets the worker number in [0, workers), so it can
// keep per-worker scratch space; chunks go to whichever worker is free.
func For(workers, n, chunk int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if chunk < 1 {
		chunk = 1
	}
	if workers > (n+chunk-1)/chunk {
		workers = (n + chunk - 1) / chunk
	}
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				fn(w, lo, min(lo+chunk, n))
			}
		}(w)
	}
	wg.Wait()
}
