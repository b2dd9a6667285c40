// Package datasets names the real data sets the project measures itself on
// (UCI adult, Google Play Store apps, SNAP com-DBLP; see SOURCES.md beside
// them), finds their files and loads them with the importer, for tests,
// benchmarks and the quality table.
//
// The files are never part of the repository. They live in Dir:
// $SMOOTHANON_DATA when set, else ../shared/data/raw beside the module root.
// Tests that need one call ForTest or PathForTest, which skip the test with
// a message naming the missing file.
//
// The importer's own tests cannot use this package (it imports the
// importer) and locate the same directory themselves.
package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/smoothanon/smoothanon/importer"
	"github.com/smoothanon/smoothanon/matrix"
)

// Set is one data set: its raw file in Dir and how the importer reads it.
type Set struct {
	Name   string
	File   string
	Format string
	Opts   importer.Options
}

// All lists the data sets.
var All = []Set{
	{Name: "adult", File: "adult.data.gz", Format: "adult"},
	{Name: "playstore", File: "googleplaystore.csv.gz", Format: "playstore"},
	{Name: "dblp", File: "com-dblp.ungraph.noheader.txt.gz", Format: "edges", Opts: importer.Options{Undirected: true}},
}

// Get returns the data set called name.
func Get(name string) (Set, error) {
	var names []string
	for _, s := range All {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Set{}, fmt.Errorf("unknown data set %q (want one of %s)", name, strings.Join(names, ", "))
}

// Dir is $SMOOTHANON_DATA when set, else ../shared/data/raw beside the
// module root (the first directory holding go.mod, from the working
// directory up), else ../shared/data/raw from the working directory.
func Dir() string {
	if d := os.Getenv("SMOOTHANON_DATA"); d != "" {
		return d
	}
	rel := filepath.Join("..", "shared", "data", "raw")
	wd, err := os.Getwd()
	if err != nil {
		return rel
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, rel)
		}
		if filepath.Dir(d) == d {
			return filepath.Join(wd, rel)
		}
	}
}

// Path is the file of s in Dir.
func (s Set) Path() string { return filepath.Join(Dir(), s.File) }

// Load imports s from Path. A missing file gives an error that matches
// fs.ErrNotExist.
func (s Set) Load() (*matrix.Matrix, error) {
	m, _, err := importer.Import(s.Format, s.Path(), s.Opts)
	if err != nil {
		return nil, fmt.Errorf("data set %s: %w", s.Name, err)
	}
	return m, nil
}

var (
	mu     sync.Mutex
	loaded = map[string]*matrix.Matrix{}
)

// PathForTest returns the file of the data set called name, or skips tb
// when it is absent.
func PathForTest(tb testing.TB, name string) string {
	tb.Helper()
	s, err := Get(name)
	if err != nil {
		tb.Fatal(err)
	}
	p := s.Path()
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("data set %s not available (%v); it lives in ../shared/data/raw beside the repository, or in $SMOOTHANON_DATA", name, err)
	}
	return p
}

// ForTest returns the data set called name, loaded once per process and
// shared by every caller (do not modify it), or skips tb when its file is
// absent.
func ForTest(tb testing.TB, name string) *matrix.Matrix {
	tb.Helper()
	PathForTest(tb, name)
	mu.Lock()
	defer mu.Unlock()
	if m, ok := loaded[name]; ok {
		return m
	}
	s, _ := Get(name) // PathForTest checked the name
	m, err := s.Load()
	if errors.Is(err, os.ErrNotExist) {
		tb.Skipf("data set %s not available: %v", name, err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	loaded[name] = m
	return m
}
