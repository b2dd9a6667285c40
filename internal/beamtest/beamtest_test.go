package beamtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMainRemovesItsTempDir(t *testing.T) {
	old := os.Getenv("TMPDIR")
	t.Cleanup(func() { os.Setenv("TMPDIR", old) })
	var dir string
	code := Main(func() int {
		dir = os.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "beamloopbackworker-1"), nil, 0o600); err != nil {
			t.Error(err)
		}
		return 3
	})
	if code != 3 {
		t.Errorf("exit code %d, want run's 3", code)
	}
	if dir == old || dir == "" {
		t.Fatalf("run saw TMPDIR %q, not a directory of its own", dir)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists (%v)", dir, err)
	}
}
