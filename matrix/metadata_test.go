package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestMetadata: key/value metadata is written and read back per file; no
// metadata leaves a file's bytes as they were; equal maps give equal bytes.
func TestMetadata(t *testing.T) {
	dir := t.TempDir()
	m := New(2, 0)
	m.Append("a", []uint32{1, 2})
	m.Append("b", nil)
	write := func(name string, md map[string]string) []byte {
		path := filepath.Join(dir, name)
		if err := WriteMatrix(path, m, WriterOptions{Metadata: md}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plain := write("plain.parquet", nil)
	if empty := write("empty.parquet", map[string]string{}); !bytes.Equal(plain, empty) {
		t.Error("an empty metadata map changed the bytes")
	}
	md := map[string]string{"x.b": "2", "x.a": "1"}
	one, two := write("one.parquet", md), write("two.parquet", map[string]string{"x.a": "1", "x.b": "2"})
	if !bytes.Equal(one, two) || bytes.Equal(one, plain) {
		t.Error("metadata bytes depend on map order, or were not written")
	}
	f, err := OpenFile(filepath.Join(dir, "one.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v, ok := f.Metadata("x.b"); !ok || v != "2" {
		t.Errorf("x.b = %q %v", v, ok)
	}
	if _, ok := f.Metadata("x.c"); ok {
		t.Error("x.c found")
	}
	vals, err := FilesMetadata(dir, "x.a")
	if err != nil {
		t.Fatal(err)
	}
	if len(vals["1"]) != 2 || len(vals[""]) != 2 {
		t.Errorf("FilesMetadata = %v", vals)
	}
}
