package main

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/internal/beamtest"
	"github.com/smoothanon/smoothanon/release"
)

// faultEnv, when set in a child started by a test (faultChild), runs the
// CLI instead of the tests: "stage:signal:ttl" kills the run with signal
// (KILL or TERM) at that release.Stage, or with signal "WAIT=path" holds
// it there until path exists; release.LeaseTTL = ttl (if it parses). The
// command line is in faultArgsEnv as JSON.
const (
	faultEnv     = "SMOOTHANON_TEST_FAULT"
	faultArgsEnv = "SMOOTHANON_TEST_ARGS"
)

// TestMain keeps Beam's leftover temp files out of /tmp (see beamtest.Main),
// or runs a fault child.
func TestMain(m *testing.M) {
	if spec := os.Getenv(faultEnv); spec != "" {
		os.Exit(faultChild(spec))
	}
	os.Exit(beamtest.Main(m.Run))
}

func faultChild(spec string) int {
	parts := strings.Split(spec, ":")
	if ttl, err := time.ParseDuration(parts[2]); err == nil {
		release.LeaseTTL = ttl
	}
	sig := map[string]syscall.Signal{"KILL": syscall.SIGKILL, "TERM": syscall.SIGTERM, "INT": syscall.SIGINT}[parts[1]]
	gate, wait := strings.CutPrefix(parts[1], "WAIT=")
	release.Fault = func(s release.Stage) {
		switch {
		case string(s) != parts[0]:
		case wait:
			for { // hold the run here until the test lets it go
				if _, err := os.Stat(gate); err == nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		case sig != 0:
			syscall.Kill(os.Getpid(), sig)
			time.Sleep(300 * time.Millisecond) // let the signal land
		}
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(faultArgsEnv)), &args); err != nil {
		return 99
	}
	return runMain(args, os.Stdout, os.Stderr)
}
