package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestForCoversEveryIndexOnce(t *testing.T) {
	for _, c := range []struct{ workers, n, chunk int }{
		{1, 10, 3}, {4, 10, 3}, {4, 1000, 7}, {8, 5, 100}, {3, 0, 4}, {2, 9, 0}, {0, 9, 2},
	} {
		hits := make([]atomic.Int32, c.n)
		For(c.workers, c.n, c.chunk, func(w, lo, hi int) {
			if w < 0 || w >= max(c.workers, 1) {
				t.Errorf("%+v: worker number %d out of range", c, w)
			}
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			if h := hits[i].Load(); h != 1 {
				t.Fatalf("%+v: index %d visited %d times", c, i, h)
			}
		}
	}
}

func TestWorkers(t *testing.T) {
	for _, c := range []struct{ in, want int }{
		{3, 3}, {1, 1}, {0, runtime.GOMAXPROCS(0)}, {-2, runtime.GOMAXPROCS(0)},
	} {
		if got := Workers(c.in); got != c.want {
			t.Errorf("Workers(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}
