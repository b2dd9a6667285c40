package matrix

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

func sample() *Matrix {
	m := New(0, 0)
	m.Append("u1", []uint32{3, 1, 2})
	m.Append("u2", nil)
	m.Append("u0", []uint32{1<<32 - 1, 0})
	return m
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.parquet")
	m := sample()
	if err := WriteMatrix(p, m, WriterOptions{RowGroupRows: 2}); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadMatrix(p, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(m) {
		t.Fatalf("round trip: got %+v want %+v", got, m)
	}
	pf, err := OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if pf.NumRowGroups() != 2 {
		t.Errorf("row groups = %d, want 2", pf.NumRowGroups())
	}
	// 5 feature ids, and one value for the row without features.
	if got := pf.FeatureValues(); got != 6 {
		t.Errorf("feature values = %d, want 6", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
}

type signedRow struct {
	UserID   string  `parquet:"user_id"`
	Features []int64 `parquet:"features,list"`
}

type badRow struct {
	UserID   int64    `parquet:"user_id"`
	Features []string `parquet:"features,list"`
}

func writeRows[T any](t *testing.T, p string, rows []T) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestReaderChecks(t *testing.T) {
	dir := t.TempDir()
	neg := filepath.Join(dir, "neg.parquet")
	writeRows(t, neg, []signedRow{{"a", []int64{1, 1, 0}}, {"b", []int64{-4}}})
	big := filepath.Join(dir, "big.parquet")
	writeRows(t, big, []signedRow{{"a", []int64{1 << 32}}})
	wrong := filepath.Join(dir, "wrong.parquet")
	writeRows(t, wrong, []badRow{{1, []string{"x"}}})
	notpq := filepath.Join(dir, "x.parquet")
	os.WriteFile(notpq, []byte("hello, not parquet"), 0o644)
	for _, tc := range []struct{ path, want string }{
		{neg, "row 1: column features: feature id -4 out of range"},
		{big, "row 0: column features: feature id 4294967296 out of range"},
		{wrong, "column user_id: wrong type"},
		{notpq, "not a readable Parquet file"},
		{filepath.Join(dir, "missing.parquet"), "no such file"},
	} {
		_, _, err := ReadMatrix(tc.path, ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Base(tc.path)) {
			t.Errorf("%s: err = %v, want it to name the file and contain %q", tc.path, err, tc.want)
		}
	}
	// signed int64 ids in range are accepted and repeats dropped.
	ok := filepath.Join(dir, "ok.parquet")
	writeRows(t, ok, []signedRow{{"a", []int64{5, 1, 5}}, {"b", nil}})
	m, _, err := ReadMatrix(ok, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Row(0); len(got) != 2 || got[0] != 1 || got[1] != 5 || len(m.Row(1)) != 0 {
		t.Errorf("rows = %v %v", m.Row(0), m.Row(1))
	}
}

func TestWrittenFileIsReadable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.parquet")
	if err := WriteMatrix(p, sample(), WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", st.Mode().Perm())
	}
}

// TestUserIDUTF8: a user id that is not valid UTF-8 is refused, naming the
// file, the row and the column but never the id's bytes.
func TestUserIDUTF8(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.parquet")
	secret := "s\xffcret"
	writeRows(t, p, []parquetRow{{"ok", []uint32{1}}, {secret, []uint32{2}}})
	want := p + ": row 1: column user_id: not valid UTF-8"
	_, _, err := ReadMatrix(p, ReadOptions{})
	var fe *FileError
	if err == nil || err.Error() != want || !errors.As(err, &fe) || fe.Row != 1 || fe.Column != ColUserID {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if strings.Contains(err.Error(), "cret") || strings.Contains(err.Error(), `\xff`) {
		t.Errorf("the error shows the id: %v", err)
	}
}

// TestOpenFIFO: a named pipe as input, named or in a directory, is
// refused at once with one line instead of blocking forever.
func TestOpenFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	want := fifo + ": is a named pipe, not a regular file"
	for name, read := range map[string]func() error{
		"ListFiles(file)": func() error { _, err := ListFiles(fifo); return err },
		"ListFiles(dir)":  func() error { _, err := ListFiles(dir); return err },
		"ReadMatrix":      func() error { _, _, err := ReadMatrix(fifo, ReadOptions{}); return err },
		"OpenFile":        func() error { _, err := OpenFile(fifo); return err },
		"OpenInput":       func() error { _, err := OpenInput(fifo); return err },
		"Read":            func() error { return Read(fifo, func(string, []uint32) error { return nil }) },
	} {
		if err := within(t, read); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// within runs fn and fails the test if it has not returned in 10 s.
func within(t *testing.T, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("blocked (opened a named pipe?)")
		return nil
	}
}
