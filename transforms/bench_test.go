package transforms

import (
	"context"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
)

// BenchmarkShuffleBytes reports the encoded size per row of every element
// that crosses a shuffle, on a block of 1e5 generated user lists (mean
// degree 10, 1e6 columns) whose release keeps half of each row in classes
// of 8: the input to the cost model's shuffle volume.
func BenchmarkShuffleBytes(b *testing.B) {
	const rows = 100_000
	g, err := gen.NewUserLists(gen.UserListsParams{Rows: rows, Columns: 1_000_000, MeanDegree: 10, Zipf: 1.1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	in, out := emptyMatrix(), emptyMatrix()
	lead := make([]uint64, rows)
	for i := int64(0); i < rows; i++ {
		user, feats := g.Row(i)
		in.Append(user, feats)
		if i%8 == 0 {
			out.Append(user, feats[:len(feats)/2])
		} else {
			out.Append(user, out.Row(int(i/8*8)))
		}
		lead[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	// The pool stage's input: 40% of the rows, whole classes, set aside.
	var aside []int
	for i := range rows * 2 / 5 / 8 * 8 {
		aside = append(aside, i)
	}
	var read, keyed, released, written, classes, pooled int
	b.ResetTimer()
	for range b.N {
		read = len(encMatrix(in))
		keyed = len(encKeyedBlock(KeyedBlock{Rows: in, Lead: lead, Tie: lead, Seed: 1}))
		released = len(encOutBlock(OutBlock{In: in, Out: out}))
		written = len(encMatrix(out))
		fn := &verifyBlockFn{}
		classes = 0
		emit := func(_ int64, c classBlock) { classes += len(encClassBlock(c)) + 8 }
		fn.ProcessElement(context.Background(), OutBlock{In: in, Out: out}, emit, nil)
		fn.FinishBundle(emit, func(Stats) {})
		pooled = 0
		for _, pb := range poolBlocks(0, &in, &out, aside) {
			pooled += len(encPoolBlock(pb)) + 8
		}
	}
	b.StopTimer()
	// One spectral round: a bundle of 1e5 rows sends one block entry per
	// distinct feature it touched (fewer bytes per row in larger bundles).
	sums := newBundleSums()
	for i := range rows {
		sums.add(in.Row(i), int64(i)%(1<<29)-1<<28)
	}
	var round int
	sums.flush(func(_ int64, fb featBlock) { round += len(encFeatBlock(fb)) + 8 })
	per := func(n int) float64 { return float64(n) / rows }
	b.ReportMetric(per(read), "B/row_rows")
	b.ReportMetric(per(keyed), "B/row_chunk_gbk")
	b.ReportMetric(per(released), "B/row_released")
	b.ReportMetric(per(written), "B/row_write_gbk")
	b.ReportMetric(per(classes), "B/row_class_combine")
	b.ReportMetric(per(round), "B/row_spectral_round@1e5")
	b.ReportMetric(float64(pooled)/float64(len(aside)), "B/pooled_row")
	b.ReportMetric(per(pooled), "B/row_pool_gbk")
}
