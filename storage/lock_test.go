package storage_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/storage"
)

// TestCreateLockedKilled kills a process at random moments while it
// creates locked files in a loop: whatever it leaves is named and
// unlocked (a sweep removes it at once), never a file still being
// created, which a sweep must leave alone for a while.
func TestCreateLockedKilled(t *testing.T) {
	if dir := os.Getenv("SMOOTHANON_TEST_CREATE_LOOP"); dir != "" {
		for {
			f, name, err := storage.CreateLocked(dir, "x-")
			if err != nil {
				panic(err)
			}
			f.Close()
			os.Remove(name)
			l, err := storage.LockFile(filepath.Join(dir, "lock"), []byte("data"))
			if err != nil {
				panic(err)
			}
			l.Release()
			os.Remove(filepath.Join(dir, "lock"))
		}
	}
	dir := t.TempDir()
	for i := range 40 {
		c := exec.Command(os.Args[0], "-test.run=^TestCreateLockedKilled$")
		c.Env = append(os.Environ(), "SMOOTHANON_TEST_CREATE_LOOP="+dir)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(40+i*37%80) * time.Millisecond)
		c.Process.Kill()
		c.Wait()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if storage.IsCreating(e.Name()) {
			t.Errorf("%s: a file the killed process was creating", e.Name())
			continue
		}
		if !strings.HasPrefix(e.Name(), "x-") && e.Name() != "lock" {
			t.Errorf("%s: unexpected", e.Name())
		}
		if live, err := storage.IsLive(filepath.Join(dir, e.Name())); err != nil || live {
			t.Errorf("%s: live=%v %v after its process died", e.Name(), live, err)
		}
	}
}
