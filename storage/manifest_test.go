package storage_test

import (
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/storage"
)

// TestParseManifestShape: a long-form manifest is version 3 and names
// its users; any other shape, or a shape in an older version, is a bad
// manifest rather than a release misread.
func TestParseManifestShape(t *testing.T) {
	for _, c := range []struct {
		json, err string
		users     int64
	}{
		{`{"version":2,"run_id":"a","total_rows":4}`, "", 4},
		{`{"version":3,"run_id":"a","total_rows":9,"shape":"long","users":4}`, "", 4},
		{`{"version":3,"run_id":"a","total_rows":4}`, "", 4},
		{`{"version":2,"run_id":"a","total_rows":9,"shape":"long","users":4}`, `shape "long" in version 2`, 0},
		{`{"version":3,"run_id":"a","shape":"wide"}`, `shape "wide" in version 3`, 0},
		{`{"version":4,"run_id":"a"}`, "version 4", 0},
	} {
		m, err := storage.ParseManifest("x/_SUCCESS", []byte(c.json))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.json, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.json, err, c.err)
		case err == nil && m.ReleasedUsers() != c.users:
			t.Errorf("%s: released users %d, want %d", c.json, m.ReleasedUsers(), c.users)
		}
	}
}
