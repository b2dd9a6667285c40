package prefetch

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestLineNeverFaults: a hint for any address, valid or not, returns.
func TestLineNeverFaults(t *testing.T) {
	b := make([]byte, 64)
	Line(unsafe.Pointer(&b[0]))
	Line(unsafe.Pointer(&b[63]))
	Line(nil)
	Line(unsafe.Add(unsafe.Pointer(&b[0]), 1<<20)) // past the end
}

// BenchmarkGather reads an array far larger than the caches at random
// positions, with a chain of dependent arithmetic between the loads (as a
// query's own work is) long enough that the CPU cannot run ahead to the
// next load by itself, with and without hinting each load some iterations
// ahead. The gap in ns/load is what Line buys such a loop.
func BenchmarkGather(b *testing.B) {
	const n = 1 << 25 // 256 MiB of uint64
	data := make([]uint64, n)
	for i := range data {
		data[i] = uint64(i)
	}
	idx := make([]int32, 1<<18)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range idx {
		idx[i] = int32(r.IntN(n))
	}
	for _, ahead := range []int{0, 4, 16} {
		b.Run(fmt.Sprintf("ahead=%d", ahead), func(b *testing.B) {
			var x uint64
			for b.Loop() {
				for i, j := range idx {
					if ahead > 0 && i+ahead < len(idx) {
						Line(unsafe.Pointer(&data[idx[i+ahead]]))
					}
					for range 128 {
						x = x*0x9E3779B97F4A7C15 + 1
					}
					x += data[j]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(idx)), "ns/load")
			if x == 42 {
				b.Log(x)
			}
		})
	}
}
