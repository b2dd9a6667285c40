package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadParquet feeds arbitrary bytes to the Parquet reader: it must return
// an error or a valid matrix, never panic or hang.
//
// It reads the bytes from memory (readBytes), and removes its seed file at
// once, rather than through f.TempDir or t.TempDir: the fuzzing engine
// kills its worker processes when the fuzz time is up, so their cleanups
// never ran and every `make fuzz` left two directories in /tmp.
func FuzzReadParquet(f *testing.F) {
	good, err := parquetBytes(sample())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(bytes.Replace(good, []byte("features"), []byte("featurez"), 1))
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := readBytes(data, ReadOptions{AllowEmpty: true})
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid matrix: %v", err)
		}
	})
}

// parquetBytes is m written as a Parquet file.
func parquetBytes(m *Matrix) ([]byte, error) {
	dir, err := os.MkdirTemp("", "smoothanon-fuzz-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "seed.parquet")
	if err := WriteMatrix(p, m, WriterOptions{RowGroupRows: 2}); err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// readBytes is ReadMatrix on a file holding data, read from memory.
func readBytes(data []byte, opts ReadOptions) (*Matrix, error) {
	pf, err := openReader("fuzz.parquet", bytes.NewReader(data), int64(len(data)), Layout{})
	if err != nil {
		return nil, err
	}
	m := New(0, 0)
	if err := pf.appendTo(m); err != nil {
		return nil, err
	}
	m, _, err = finishRead("fuzz.parquet", m, nil, opts, ReadStats{Files: 1})
	return m, err
}
