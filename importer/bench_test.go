package importer

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strconv"
	"testing"
)

// loadRaw reads a shared dataset decompressed into memory.
func loadRaw(b *testing.B, name string) []byte {
	p := dataset(b, name)
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// benchParse measures parsing and matrix building from memory (no gzip).
func benchParse(b *testing.B, format, name string, opts Options) {
	data := loadRaw(b, name)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var entries int64
	for b.Loop() {
		m, _, err := Read(format, bytes.NewReader(data), name, opts)
		if err != nil {
			b.Fatal(err)
		}
		entries = m.NumEntries()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(entries), "ns/entry")
	b.ReportMetric(float64(entries), "entries")
}

// benchImport measures the whole Import of the gzip file, as the CLI runs it.
func benchImport(b *testing.B, format, name string, opts Options) {
	p := dataset(b, name)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Import(format, p, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/import")
}

func BenchmarkParseDBLPUndirected(b *testing.B) {
	benchParse(b, "edges", "com-dblp.ungraph.noheader.txt.gz", Options{Undirected: true})
}
func BenchmarkImportDBLPUndirected(b *testing.B) {
	benchImport(b, "edges", "com-dblp.ungraph.noheader.txt.gz", Options{Undirected: true})
}
func BenchmarkParseAdult(b *testing.B) { benchParse(b, "adult", "adult.data.gz", Options{}) }
func BenchmarkParsePlaystore(b *testing.B) {
	benchParse(b, "playstore", "googleplaystore.csv.gz", Options{})
}
func BenchmarkImportAdult(b *testing.B) { benchImport(b, "adult", "adult.data.gz", Options{}) }

// synthEdges is a deterministic edge list of n lines over about n/4 nodes.
func synthEdges(n int) []byte {
	var b bytes.Buffer
	x := uint64(0x9E3779B97F4A7C15)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		src := (x >> 8) % uint64(n/4+1)
		dst := (x >> 32) % uint64(n/4+1)
		b.WriteString(strconv.FormatUint(src, 10))
		b.WriteByte('\t')
		b.WriteString(strconv.FormatUint(dst, 10))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkEdgesSynthetic needs no shared data: 1M random edges, undirected.
func BenchmarkEdgesSynthetic(b *testing.B) {
	data := synthEdges(1 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Edges(bytes.NewReader(data), "synthetic", Options{Undirected: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(1<<20), "ns/line")
}

// BenchmarkPairsSynthetic needs no shared data: 1M pairs with string user ids.
func BenchmarkPairsSynthetic(b *testing.B) {
	data := append([]byte("u"), bytes.ReplaceAll(synthEdges(1<<20), []byte("\n"), []byte("\nu"))...)
	data = data[:len(data)-1]
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Pairs(bytes.NewReader(data), "synthetic", Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(1<<20), "ns/line")
}
