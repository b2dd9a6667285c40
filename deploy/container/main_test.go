package container

import (
	"os"
	"testing"

	"github.com/smoothanon/smoothanon/internal/beamtest"
)

// TestMain gives the tests, and the launchers they start on the host
// (which inherit TMPDIR), a temp directory of their own that is removed
// afterwards: Beam's loopback runner leaves files there (see beamtest.Main).
func TestMain(m *testing.M) { os.Exit(beamtest.Main(m.Run)) }
