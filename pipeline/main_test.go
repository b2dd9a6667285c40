package pipeline

import (
	"os"
	"testing"

	"github.com/smoothanon/smoothanon/internal/beamtest"
)

// TestMain keeps Beam's leftover temp files out of /tmp (see beamtest.Main).
func TestMain(m *testing.M) { os.Exit(beamtest.Main(m.Run)) }
