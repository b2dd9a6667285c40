package deploy

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeBoot stands in for Beam's Go boot loader: it stages $STAGE_FROM into
// <semi_persist_dir>/staged/worker, copies its first $COPY_BYTES bytes to
// a fresh /tmp/bin*/worker as boot does, names the copy in $REPORT, and
// then waits as a boot killed before it started its worker would.
const fakeBoot = `#!/usr/bin/env bash
for a; do case $a in --semi_persist_dir=*) d=${a#*=} ;; esac; done
mkdir -p "$d/staged" && cp "$STAGE_FROM" "$d/staged/worker" || exit 1
c=$(mktemp -d /tmp/binXXXXXXXX)/worker
head -c "$COPY_BYTES" "$d/staged/worker" >"$c"
echo "$c" >"$REPORT.tmp" && mv "$REPORT.tmp" "$REPORT"
exec sleep 300
`

// TestProcessBootSweepsCopies stops flink/process-boot.sh while its boot
// loader has copied the worker binary and not yet started the worker (a
// failover does so), by SIGTERM as the runner stops an environment and by
// SIGKILL as a dead TaskManager leaves it, and requires the copy (whole or
// partial) and the script's directory gone, while a copy of the same
// binary another process holds open and a copy of another binary stay.
func TestProcessBootSweepsCopies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process-boot.sh reads /proc: linux only")
	}
	for _, tool := range []string{"cmp", "find", "stat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("process-boot.sh needs %s", tool)
		}
	}
	dir := t.TempDir()
	binary := make([]byte, 1<<20)
	if _, err := rand.Read(binary); err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(dir, "binary")
	boot := filepath.Join(dir, "boot")
	must(t, os.WriteFile(staged, binary, 0o644))
	must(t, os.WriteFile(boot, []byte(fakeBoot), 0o755))

	// Copies that are not this boot's leftovers.
	held := bootCopy(t, binary)
	f, err := os.Open(held)
	must(t, err)
	defer f.Close()
	other := bootCopy(t, append([]byte("another binary"), binary[14:]...))

	for _, tc := range []struct {
		name   string
		bytes  int
		signal syscall.Signal
	}{
		{"stopped", len(binary), syscall.SIGTERM},
		{"stopped-mid-copy", len(binary) / 3, syscall.SIGTERM},
		{"killed", len(binary), syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp, report := t.TempDir(), filepath.Join(dir, tc.name+".copy")
			cmd := exec.Command("bash", "flink/process-boot.sh", "--id=1-1")
			cmd.Env = append(os.Environ(), "BEAM_GO_BOOT="+boot, "TMPDIR="+tmp, "STAGE_FROM="+staged,
				"COPY_BYTES="+strconv.Itoa(tc.bytes), "REPORT="+report)
			must(t, cmd.Start())
			var copy string
			for deadline := time.Now().Add(20 * time.Second); copy == ""; time.Sleep(50 * time.Millisecond) {
				if b, err := os.ReadFile(report); err == nil {
					copy = strings.TrimSpace(string(b))
				} else if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("the fake boot loader made no copy within 20 s")
				}
			}
			t.Cleanup(func() { os.RemoveAll(filepath.Dir(copy)) })
			must(t, cmd.Process.Signal(tc.signal))
			cmd.Wait()
			// The watcher of a killed script needs up to a second to
			// notice, then the sweep's two looks 2 s apart.
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				_, err := os.Stat(filepath.Dir(copy))
				left, _ := filepath.Glob(filepath.Join(tmp, "beam-boot.*"))
				if os.IsNotExist(err) && len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("15 s after %v: copy %s (gone: %v), directories %q left", tc.signal, copy, os.IsNotExist(err), left)
				}
			}
			for _, c := range []string{held, other} {
				if _, err := os.Stat(c); err != nil {
					t.Errorf("%s, not this boot's leftover, was removed: %v", c, err)
				}
			}
		})
	}
}

// bootCopy writes content to a fresh /tmp/bin*/worker, removed after t.
func bootCopy(t *testing.T, content []byte) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "bin")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	c := filepath.Join(d, "worker")
	must(t, os.WriteFile(c, content, 0o755))
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
