package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	for _, s := range All {
		got, err := Get(s.Name)
		if err != nil || got.File != s.File {
			t.Errorf("Get(%q) = %+v, %v", s.Name, got, err)
		}
	}
	if _, err := Get("mnist"); err == nil || !strings.Contains(err.Error(), `"mnist"`) || !strings.Contains(err.Error(), "dblp") {
		t.Errorf("Get(mnist) error = %v, want one naming the bad name and the known ones", err)
	}
}

func TestDir(t *testing.T) {
	t.Setenv("SMOOTHANON_DATA", "/data/here")
	if got := Dir(); got != "/data/here" {
		t.Errorf("Dir() with SMOOTHANON_DATA = %q", got)
	}
	t.Setenv("SMOOTHANON_DATA", "")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// This package is internal/datasets: the module root is two levels up.
	want := filepath.Join(wd, "..", "..", "..", "shared", "data", "raw")
	if got := Dir(); filepath.Clean(got) != filepath.Clean(want) {
		t.Errorf("Dir() = %q, want %q", got, want)
	}
}

func TestLoadMissing(t *testing.T) {
	t.Setenv("SMOOTHANON_DATA", t.TempDir())
	s, _ := Get("adult")
	if _, err := s.Load(); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "adult") {
		t.Errorf("Load of a missing file: %v, want a not-exist error naming the set", err)
	}
	ok := t.Run("skips", func(t *testing.T) {
		ForTest(t, "adult")
		t.Error("ForTest returned for a missing file")
	})
	if !ok {
		t.Error("the subtest failed instead of skipping")
	}
}

func TestForTest(t *testing.T) {
	m := ForTest(t, "adult")
	if m.NumRows() != 32561 || m.NumEntries() != 260488 {
		t.Fatalf("adult: %d rows, %d entries", m.NumRows(), m.NumEntries())
	}
	if again := ForTest(t, "adult"); again != m {
		t.Error("second ForTest loaded the data set again")
	}
}
