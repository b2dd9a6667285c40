// Package beamtest is test setup shared by the packages whose tests run
// Beam pipelines.
package beamtest

import (
	"fmt"
	"os"
)

// Main runs the tests (run: m.Run, or a ptest.MainRet wrapper) with TMPDIR
// set to a fresh directory, removes the directory, and returns run's exit
// code for os.Exit. Beam's loopback runner (runnerlib.Execute, v2.77.0)
// creates an empty "beamloopbackworker-*" file in the temp directory for
// every job and never removes it: one run of the tests left 44 in /tmp.
func Main(run func() int) int {
	dir, err := os.MkdirTemp("", "smoothanon-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "beamtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("TMPDIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, "beamtest:", err)
		return 1
	}
	return run()
}
