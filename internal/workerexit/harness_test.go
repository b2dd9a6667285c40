package workerexit

import (
	"bytes"
	"strings"
	"testing"
)

func TestCopyLinesExitsAfterHarnessDone(t *testing.T) {
	in := "starting\n" + harnessDone + "\nnot copied before exit\n"
	var out bytes.Buffer
	var atExit string
	copyLines(strings.NewReader(in), &out, func() {
		if atExit == "" {
			atExit = out.String()
		}
	})
	if want := "starting\n" + harnessDone + "\n"; atExit != want {
		t.Errorf("exit called after copying %q, want %q", atExit, want)
	}
	if out.String() != in {
		t.Errorf("copied %q, want %q", out.String(), in)
	}
}

func TestCopyLinesWithoutHarnessDone(t *testing.T) {
	in := "Worker failed: control.Recv failed\nno newline at the end"
	var out bytes.Buffer
	copyLines(strings.NewReader(in), &out, func() { t.Error("exit called without the harness's done line") })
	if out.String() != in {
		t.Errorf("copied %q, want %q", out.String(), in)
	}
}
