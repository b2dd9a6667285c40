package workerexit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveBootCopy(t *testing.T) {
	tmp := t.TempDir()
	mk := func(rel ...string) string {
		p := filepath.Join(append([]string{tmp}, rel...)...)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("elf"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	copyExe := mk("bin123", "worker")
	if err := removeBootCopy(copyExe, tmp); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(copyExe)); !os.IsNotExist(err) {
		t.Errorf("boot copy %s not removed (%v)", filepath.Dir(copyExe), err)
	}

	keep := []string{
		mk("bin456", "smoothanon"),    // not boot's name
		mk("staged", "worker"),        // not a bin* directory
		mk("bin789", "sub", "worker"), // not directly under tmp
		mk("bin000", "worker"),        // shares its directory...
		mk("bin000", "notes.txt"),     // ...with another file
	}
	for _, p := range keep {
		if err := removeBootCopy(p, tmp); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
