package workerexit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// bootTmp is where Beam's Go boot loader (sdks/go/container/boot.go,
// v2.77.0) copies the staged worker binary before running it:
// os.MkdirTemp("/tmp/", "bin*") + "/worker", a fresh directory per worker
// that nothing ever removes.
const bootTmp = "/tmp"

// removeBootCopy unlinks exe and its directory when exe is such a copy:
// named "worker", alone in a directory bin* directly under tmp. A running
// binary may be unlinked on Unix; its blocks are freed when the process
// ends. Anything else is left alone.
func removeBootCopy(exe, tmp string) error {
	dir := filepath.Dir(exe)
	if filepath.Base(exe) != "worker" || filepath.Dir(dir) != filepath.Clean(tmp) ||
		!strings.HasPrefix(filepath.Base(dir), "bin") {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		return nil
	}
	if err := os.Remove(exe); err != nil {
		return fmt.Errorf("removing the boot loader's copy %s: %w", exe, err)
	}
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("removing the boot loader's directory %s: %w", dir, err)
	}
	return nil
}
