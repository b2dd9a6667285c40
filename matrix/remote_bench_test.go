package matrix

import (
	"testing"

	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// BenchmarkRemoteRowGroup reads one row group of an 8-group file from fake
// GCS and S3 and reports the ranged requests and bytes per row group
// (footer included) against the file's size: a row group must cost about
// its share of the file, never the whole object.
func BenchmarkRemoteRowGroup(b *testing.B) {
	const rows, groups = 8 * 4096, 8
	m := New(0, 0)
	for i := range rows {
		m.Append(string(rune('a'+i%26))+itoa(i), []uint32{uint32(i % 97), uint32(100 + i%1013), uint32(2000 + i%7919)})
	}
	for _, store := range []string{"gs", "s3"} {
		b.Run(store, func(b *testing.B) {
			storagetest.Start(b, store, "bkt")
			uri := store + "://bkt/f.parquet"
			if err := WriteMatrix(uri, m, WriterOptions{RowGroupRows: rows / groups}); err != nil {
				b.Fatal(err)
			}
			var size, reqs, bytes int64
			for i := 0; i < b.N; i++ {
				f, err := OpenFile(uri)
				if err != nil {
					b.Fatal(err)
				}
				if err := f.ReadRowGroup(i%groups, func(string, []uint32) error { return nil }); err != nil {
					b.Fatal(err)
				}
				st := f.ReadStats()
				size, reqs, bytes = f.Size(), reqs+st.Requests, bytes+st.Bytes
				f.Close()
			}
			b.ReportMetric(float64(reqs)/float64(b.N), "requests/rowgroup")
			b.ReportMetric(float64(bytes)/float64(b.N), "bytes/rowgroup")
			b.ReportMetric(float64(size), "file_bytes")
		})
	}
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(buf[n:])
		}
	}
}
