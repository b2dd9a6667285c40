package transforms

import (
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/smoothanon/smoothanon/internal/beamtest"
)

// TestMain runs ptest's setup, keeping Beam's leftover temp files out of
// /tmp (see beamtest.Main).
func TestMain(m *testing.M) {
	os.Exit(beamtest.Main(func() int { return ptest.MainRet(m) }))
}
