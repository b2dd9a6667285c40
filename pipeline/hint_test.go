package pipeline

import (
	"errors"
	"strings"
	"testing"
)

func TestRunnerHint(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("job x failed:\njava.lang.OutOfMemoryError: Java heap space"), ""},
		// As the Flink job server reports it (standalone cluster, a
		// partition's share of a 1e6-row group).
		{errors.New("job go0job01 failed:\njava.io.IOException: The record exceeds the maximum size of a sort buffer (current maximum: 10485760 bytes)."),
			"lower --chunk_size"},
	} {
		got := runnerHint(c.err, 100000)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("runnerHint(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if got := runnerHint(errors.New(flinkSortRecord), 100000); !strings.Contains(got, "--chunk_size=100000") {
		t.Errorf("hint %q does not name the chunk size", got)
	}
}
