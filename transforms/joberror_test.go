package transforms

import (
	"errors"
	"fmt"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
)

// TestJobInputError: errors about a file, a row or a store are marked so
// the launcher finds their one line inside a runner's many-line error;
// other errors are not.
func TestJobInputError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&matrix.FileError{Path: "in.parquet", Row: 7, Column: "user_id", Err: errors.New("not valid UTF-8")}, "in.parquet: row 7: column user_id: not valid UTF-8"},
		{&storage.Error{URI: "gs://b/x", Err: storage.ErrTimeout}, "gs://b/x: the store does not answer"},
		{fmt.Errorf("write: %w", &storage.Error{URI: "s3://b/y", Err: storage.ErrPermission}), "write: s3://b/y: permission denied"},
		{errors.New("solver broke"), ""},
	} {
		marked := markJobError(c.err)
		// As a runner reports it: nested in lines of its own.
		job := fmt.Errorf("job failed:\nbundle inst3 failed:\n\tcaused by:\n%v\nsource failed", marked)
		line, ok := JobInputError(job)
		if c.want == "" {
			if ok || marked != c.err {
				t.Errorf("%v: marked as input (%q)", c.err, line)
			}
			continue
		}
		if !ok || line != c.want || !errors.Is(marked, c.err) {
			t.Errorf("%v: found %q %v, want %q", c.err, line, ok, c.want)
		}
	}
}
