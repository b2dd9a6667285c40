package workerexit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// harnessDone is the line Beam's harness init hook (runtime/harness/init,
// v2.77.0) prints on stderr when harness.MainWithOptions returned without
// error, i.e. the runner closed the control stream; it then sleeps forever.
// TestWorkerExitsWhenControlStreamEnds fails when a Beam upgrade changes it.
const harnessDone = "Worker exited successfully!"

// exitAfterHarness replaces os.Stderr by a pipe whose lines are copied to
// the real stderr, and calls exit right after copying the harnessDone line.
// The returned wait closes the pipe and returns once everything written to
// it was copied.
func exitAfterHarness(exit func()) (wait func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	real := os.Stderr
	os.Stderr = w
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		copyLines(r, real, exit)
	}()
	return func() {
		os.Stderr = real
		w.Close()
		<-copied
	}, nil
}

// copyLines copies r to dst line by line and calls exit after the
// harnessDone line.
func copyLines(r io.Reader, dst io.Writer, exit func()) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		dst.Write([]byte(line))
		if strings.TrimRight(line, "\r\n") == harnessDone {
			exit()
		}
		if err != nil {
			return
		}
	}
}
