package doclist

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestItems(t *testing.T) {
	dir := t.TempDir()
	write := func(doc string) string {
		path := filepath.Join(dir, "doc.go")
		if err := os.WriteFile(path, []byte(doc+"\npackage x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write(`// Package x does things.
//
// # Other
//
//   - not: this list
//
// # Steps
//
// The steps:
//
//   - [A]: the first,
//     over two lines.
//   - B, when [pkg.C] holds: the second.
//
//     More of B.
//
// # After
//
//   - C: not a step.`)
	got, err := Items(path, "Steps")
	if want := []string{"A: the first, over two lines.", "B, when pkg.C holds: the second."}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Items = %q, %v; want %q", got, err, want)
	}
	for doc, want := range map[string]string{
		"// Package x.\n//\n// # Steps\n//\n// No list.\n//\n// # After\n//\n//   - C: no.": "no list under # Steps",
		"// Package x.\n//\n// # Stops\n//\n//   - A: a.":                                   "no heading # Steps",
		"// Package x.\n//\n// # Steps\n//\n// No list.":                                    "no list under # Steps",
		"// Not a package doc.\n\n":                                                         "no package doc",
	} {
		if _, err := Items(write(doc), "Steps"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("doc %q: error %v, want %q", doc, err, want)
		}
	}
}
