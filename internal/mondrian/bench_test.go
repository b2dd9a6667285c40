package mondrian

import (
	"context"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
)

// BenchmarkPartitionUserLists cuts 1e5 generated power-law user lists
// (mean degree 10, 1e5 columns) with k = 8, as the solver's Mondrian
// candidate does.
func BenchmarkPartitionUserLists(b *testing.B) {
	m, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 1e5, Columns: 1e5, MeanDegree: 10, Zipf: 1.1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, _, err := Partition(context.Background(), m, 8); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.NumRows()), "ns/row")
}
