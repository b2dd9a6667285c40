package transforms

import (
	"runtime"
	"testing"
)

// The SDK keeps a stage's DoFns and emitters, a plan per bundle
// descriptor, as long as the descriptor lives, and Flink registers a
// descriptor per partition (docs/decisions/023-worker-retention.md). These
// tests keep what such plans keep, a DoFn per partition and the last value
// each emitter sent, and check that it holds next to nothing once the
// bundles are done.

// heapAfterGC is the live heap after a full collection.
func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC() // a second cycle empties sync.Pool's victim cache
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestAccountFnKeepsNoCountsBetweenBundles: an accountFn whose bundle has
// ended holds no count array, so a worker keeping one per partition holds
// none.
func TestAccountFnKeepsNoCountsBetweenBundles(t *testing.T) {
	const partitions, feature = 8, 1 << 21 // each bundle's dense array: 24 MiB
	row := []uint32{3, feature}
	b := OutBlock{In: blockOf(testRow{"u", row}), Out: blockOf(testRow{"u", row})}
	before := heapAfterGC()
	fns := make([]*accountFn, partitions)
	emitted := 0
	for i := range fns {
		fns[i] = &accountFn{}
		fns[i].ProcessElement(b, func(int64, featCounts) {})
		fns[i].FinishBundle(func(int64, featCounts) { emitted++ })
		if fns[i].acc.dense != nil || fns[i].acc.touched != nil {
			t.Fatalf("partition %d: the DoFn keeps %d dense counts and %d touched ids after its bundle", i, len(fns[i].acc.dense), len(fns[i].acc.touched))
		}
	}
	if emitted != 2*partitions {
		t.Errorf("%d blocks emitted, want %d", emitted, 2*partitions)
	}
	// One array may live on in denseCounts until the collector takes it;
	// one per partition may not.
	if held := heapAfterGC() - before; held > 2*12*(feature+1) {
		t.Errorf("%d DoFns hold %d MiB after their bundles", partitions, held>>20)
	}
	runtime.KeepAlive(fns)

	// The array handed on is zeroed: a second bundle counts from zero.
	fn := &accountFn{}
	got := map[uint32][3]int64{}
	for range 2 {
		fn.ProcessElement(b, func(int64, featCounts) {})
		clear(got)
		fn.FinishBundle(func(_ int64, c featCounts) {
			for i, f := range c.Feats {
				got[f] = [3]int64{c.Held[i], c.Released[i], c.Kept[i]}
			}
		})
		if len(got) != 2 || got[3] != [3]int64{1, 1, 1} || got[feature] != [3]int64{1, 1, 1} {
			t.Fatalf("bundle counted %v, want features 3 and %d once each", got, feature)
		}
	}
}
