package pipeline

import (
	"os"
	"testing"

	"github.com/smoothanon/smoothanon/internal/beamtest"
)

// TestMain keeps Beam's leftover temp files out of /tmp (see beamtest.Main).
// The worker-exit tests (workerexit_test.go) start this test binary as a
// Beam worker, and as the short-lived parent of one.
func TestMain(m *testing.M) {
	MaybeRunWorker()
	if endpoint := os.Getenv(workerParentEnv); endpoint != "" {
		os.Exit(runWorkerParent(endpoint))
	}
	os.Exit(beamtest.Main(m.Run))
}
