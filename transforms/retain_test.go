package transforms

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
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

// TestSolveEmitsLastRowAlone: the last block and set-aside piece a chunk's
// solve emits, the values its emitters keep, hold one row of their own,
// not the chunk: nothing of the chunk's rows, its release or the decoded
// pieces its user ids point into stays reachable through them.
func TestSolveEmitsLastRowAlone(t *testing.T) {
	m, err := gen.SBM(gen.SBMParams{N: 2000, S: 100, Q: 0.5, P: 0.005, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 500) // user ids of 500 bytes: the chunk's ids hold 1 MB
	for i := range m.Users {
		m.Users[i] = fmt.Sprintf("%s%06d", long, i)
	}
	fn := &solveFn{Solver: solver.Params{K: 4, Mode: matrix.Smooth, Seed: 3, Workers: 1, Start: solver.StartMondrian}, PoolShare: 0.4}
	for _, pieces := range []int{1, 4} {
		// The chunk arrives as decoded pieces, as from the runner.
		var enc [][]byte
		for p := range pieces {
			var rows []int
			for i := p; i < m.NumRows(); i += pieces {
				rows = append(rows, i)
			}
			enc = append(enc, encChunkBlock(ChunkBlock{Block: KeyedBlock{Rows: pick(m, rows), Seed: 1}, Chunks: 2}))
		}
		var lastOut OutBlock
		var lastAside PoolBlock
		var lastStat ChunkStat
		rows, aside := 0, 0
		err := func() error {
			var blocks []ChunkBlock
			for _, e := range enc {
				c, err := decChunkBlock(e)
				if err != nil {
					return err
				}
				blocks = append(blocks, c)
			}
			return fn.ProcessElement(context.Background(), 0, iterOf(blocks),
				func(o OutBlock) { lastOut = o; rows += o.In.NumRows() },
				func(_ int64, b PoolBlock) { lastAside = b; aside += b.In.NumRows() },
				func(s ChunkStat) { lastStat = s })
		}()
		if err != nil {
			t.Fatal(err)
		}
		if rows+aside != m.NumRows() || aside == 0 {
			t.Fatalf("%d rows released and %d set aside of %d", rows, aside, m.NumRows())
		}
		if lastOut.In.NumRows() != 1 || lastOut.Out.NumRows() != 1 || lastAside.In.NumRows() != 1 {
			t.Errorf("last block of %d rows, last piece of %d; want 1 each", lastOut.In.NumRows(), lastAside.In.NumRows())
		}
		kept := heapAfterGC()
		runtime.KeepAlive(&lastOut)
		runtime.KeepAlive(&lastAside)
		runtime.KeepAlive(&lastStat)
		lastOut, lastAside, lastStat = OutBlock{}, PoolBlock{}, ChunkStat{}
		if held := kept - heapAfterGC(); held > 64<<10 {
			t.Errorf("%d pieces: the last values emitted hold %d KiB", pieces, held>>10)
		}
	}
}
