package pipeline

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// processMarker is an environment variable, unique to one test, that the
// test sets on the processes it starts (job server, Flink cluster); boot
// loaders and Go workers inherit it, so any process still carrying it after
// the test is a leak of that test, whatever its parent PID.
func processMarker(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "SMOOTHANON_TEST_RUN=" + hex.EncodeToString(b)
}

// markedProcesses lists "PID cmdline" of the live processes whose
// environment holds marker and whose command line contains match.
func markedProcesses(marker, match string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || processGone(pid) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), []byte(marker+"\x00")) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !strings.Contains(string(cmd), match) {
			continue
		}
		found = append(found, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	return found
}

// bootOrWorker matches the command lines of Beam's boot loader and of Go
// workers ("--id=..."), not the runner's java processes.
const bootOrWorker = "--id="

// checkNoLeftovers fails t when, 20 s after a Flink job or test ended, a
// process carrying marker whose command line contains match still runs,
// or when a copy of worker (Beam's boot loader makes /tmp/bin*/worker) is
// left; worker "" skips the copies.
func checkNoLeftovers(t *testing.T, marker, match, worker string) {
	t.Helper()
	checkNoLeftoversWithin(t, 20*time.Second, marker, match, worker)
}

// checkNoLeftoversWithin is checkNoLeftovers waiting up to wait.
func checkNoLeftoversWithin(t *testing.T, wait time.Duration, marker, match, worker string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(wait); ; time.Sleep(500 * time.Millisecond) {
		if left = markedProcesses(marker, match); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range left {
		t.Errorf("process left running %v after the job: %.300s", wait, p)
	}
	if worker == "" {
		return
	}
	copies, err := copiesOf(worker, "/tmp/bin*/worker")
	if err != nil {
		t.Error(err)
	}
	for _, c := range copies {
		t.Errorf("copy of the worker binary left: %s", c)
	}
}

// checkNoSharedStaging fails t when Beam's boot loader materialized worker
// into the host-wide /tmp/staged since start: deploy/flink/process-boot.sh
// gives every boot loader a directory of its own (two boots sharing
// /tmp/staged rewrite the binary while the other runs it).
func checkNoSharedStaging(t *testing.T, worker string, since time.Time) {
	t.Helper()
	copies, err := copiesOf(worker, "/tmp/staged/*")
	if err != nil {
		t.Error(err)
	}
	for _, c := range copies {
		if st, err := os.Stat(c); err == nil && !st.ModTime().Before(since) {
			t.Errorf("boot loader staged the worker binary into the shared %s", c)
		}
	}
}

// procIDs returns the parent PID and process group of pid (0, 0 when it
// is gone).
func procIDs(pid int) (ppid, pgid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 3 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(f[1])
	pgid, _ = strconv.Atoi(f[2])
	return ppid, pgid
}

// copiesOf lists the files matching glob whose bytes equal file's.
func copiesOf(file, glob string) ([]string, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	want, err := fileHash(file)
	if err != nil {
		return nil, err
	}
	matches, _ := filepath.Glob(glob)
	var copies []string
	for _, m := range matches {
		if mst, err := os.Stat(m); err != nil || mst.Size() != st.Size() {
			continue
		}
		if h, err := fileHash(m); err == nil && h == want {
			copies = append(copies, m)
		}
	}
	return copies, nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
