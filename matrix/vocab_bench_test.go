package matrix

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkVocabLoad loads vocabularies of 1e6 and 1e7 names of 20 bytes
// ("/interest/" and 10 digits), as a worker loads the staged vocab.bin,
// and reports the heap it holds per name and in all (the bound
// docs/datasets.md states: the names' bytes plus 16 per name), and the
// lookups per second.
func BenchmarkVocabLoad(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
			var file bytes.Buffer
			{
				v := NewGrowingVocab(ValuesStrings)
				for i := range n {
					v.ID(fmt.Appendf(nil, "/interest/%010d", i))
				}
				v.WriteTo(&file)
			}
			var held uint64
			var v *Vocab
			for b.Loop() {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				var err error
				if v, err = ReadVocab(bytes.NewReader(file.Bytes())); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				held = after.HeapAlloc - before.HeapAlloc
			}
			b.ReportMetric(float64(held)/float64(n), "bytes/name")
			b.ReportMetric(float64(held)/(1<<20), "MB")
			key := []byte("/interest/0000000042")
			const lookups = 1_000_000
			t0 := time.Now()
			for i := range lookups {
				key[len(key)-1] = byte('0' + i%10)
				if _, ok := v.Lookup(key); !ok {
					b.Fatal("a name is missing")
				}
			}
			b.ReportMetric(float64(lookups)/time.Since(t0).Seconds(), "lookups/s")
			runtime.KeepAlive(v)
		})
	}
}
