package par

import (
	"sync/atomic"
	"testing"
)

func TestForCoversEveryIndexOnce(t *testing.T) {
	for _, c := range []struct{ workers, n, chunk int }{
		{1, 10, 3}, {4, 10, 3}, {4, 1000, 7}, {8, 5, 100}, {3, 0, 4}, {2, 9, 0}, {0, 9, 2},
	} {
		hits := make([]atomic.Int32, c.n)
		var maxWorker atomic.Int32
		For(c.workers, c.n, c.chunk, func(w, lo, hi int) {
			if int32(w) > maxWorker.Load() {
				maxWorker.Store(int32(w))
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
		if w := int(maxWorker.Load()); w >= max(c.workers, 1) {
			t.Errorf("%+v: worker number %d out of range", c, w)
		}
	}
}
