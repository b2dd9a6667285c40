package transforms

import (
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/lsh"
)

// BenchmarkShuffleBytes reports the encoded size per row of every element
// type that crosses a shuffle, on generated user lists (mean degree 10,
// 1e6 columns): the input to the cost model's shuffle volume.
func BenchmarkShuffleBytes(b *testing.B) {
	g, err := gen.NewUserLists(gen.UserListsParams{Rows: 100_000, Columns: 1_000_000, MeanDegree: 10, Zipf: 1.1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	h := lsh.New(1)
	var sig, out, row, class, n int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		user, feats := g.Row(int64(i % 100_000))
		r := Row{User: user, Features: feats}
		sr := SigRow{Lead: 1, Sig: h.Sign(feats), Row: r}
		kept := feats[:len(feats)/2]
		sig += int64(len(encSigRow(sr)) + 8) // + chunk id key
		out += int64(len(encOutRow(OutRow{User: user, In: feats, Out: kept})))
		row += int64(len(encRow(Row{User: user, Features: kept})) + 8) // + shard key
		class += int64(len(encClassAcc(ClassAcc{Rows: 1, Out: kept, Hits: make([]int64, len(kept))})) + 16)
		n++
	}
	// One spectral round: a bundle of 1e5 rows sends one block entry per
	// distinct feature it touched (fewer bytes per row in larger bundles).
	sums := bundleSums{}
	for i := int64(0); i < 100_000; i++ {
		_, feats := g.Row(i)
		sums.add(feats, i%(1<<29)-1<<28)
	}
	var round int64
	sums.flush(func(_ int64, fb featBlock) { round += int64(len(encFeatBlock(fb))) + 8 })
	b.ReportMetric(float64(round)/100_000, "B/row_spectral_round@1e5")
	b.ReportMetric(float64(sig)/float64(n), "B/row_chunk_gbk")
	b.ReportMetric(float64(class)/float64(n), "B/row_class_combine")
	b.ReportMetric(float64(row)/float64(n), "B/row_write_gbk")
	b.ReportMetric(float64(out)/float64(n), "B/row_outrow")
}
