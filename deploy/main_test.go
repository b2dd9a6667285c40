package deploy

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the smoothanon binary the tests built (names_test.go).
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}
