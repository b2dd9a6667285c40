package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadParquet feeds arbitrary bytes to the Parquet reader: it must return
// an error or a valid matrix, never panic or hang.
func FuzzReadParquet(f *testing.F) {
	dir := f.TempDir()
	p := filepath.Join(dir, "seed.parquet")
	if err := WriteMatrix(p, sample(), WriterOptions{RowGroupRows: 2}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(bytes.Replace(good, []byte("features"), []byte("featurez"), 1))
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "in.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, _, err := ReadMatrix(path, ReadOptions{AllowEmpty: true})
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid matrix: %v", err)
		}
	})
}
