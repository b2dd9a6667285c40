package gen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

var defaultUserLists = UserListsParams{Rows: 1_000_000, Columns: 100_000, MeanDegree: 10, Zipf: 1.1, Seed: 1}

// BenchmarkUserListsParquet streams 10^6 default user lists to a Parquet
// file and reports rows/s.
func BenchmarkUserListsParquet(b *testing.B) {
	dir := b.TempDir()
	var size int64
	for i := 0; i < b.N; i++ {
		path := filepath.Join(dir, "ul.parquet")
		w, err := matrix.Create(path, matrix.WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := UserLists(w, defaultUserLists); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		st, _ := os.Stat(path)
		size = st.Size()
	}
	b.ReportMetric(float64(defaultUserLists.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(size)/float64(defaultUserLists.Rows), "file_bytes/row")
}

// BenchmarkUserListsRows draws 10^6 default user lists without writing them.
func BenchmarkUserListsRows(b *testing.B) {
	g, err := NewUserLists(defaultUserLists)
	if err != nil {
		b.Fatal(err)
	}
	entries := 0
	for i := 0; i < b.N; i++ {
		entries = 0
		for r := int64(0); r < defaultUserLists.Rows; r++ {
			_, f := g.Row(r)
			entries += len(f)
		}
	}
	b.ReportMetric(float64(defaultUserLists.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(entries)/float64(defaultUserLists.Rows), "entries/row")
}

// BenchmarkSBM draws the paper's SBM, and a 64 times larger one.
func BenchmarkSBM(b *testing.B) {
	for _, bc := range []struct {
		name string
		p    SBMParams
	}{{"paper", PaperSBM(1)}, {"n65536", SBMParams{N: 65536, S: 64, Q: 0.8, P: 0.0001, Seed: 1}}} {
		b.Run(bc.name, func(b *testing.B) {
			var entries int64
			for i := 0; i < b.N; i++ {
				m, err := SBM(bc.p)
				if err != nil {
					b.Fatal(err)
				}
				entries = m.NumEntries()
			}
			b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
