package pipeline

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// jobManagerLog reads a Flink JobManager's log: how many times a job went
// to RESTARTING, and why its tasks failed.
type jobManagerLog string

func (l jobManagerLog) restarts() int {
	b, _ := os.ReadFile(string(l))
	return bytes.Count(b, []byte("to RESTARTING"))
}

// logCauses logs each task failure the JobManager recorded, with the
// causes under it, so that a failed CI run says why the job restarted.
func (l jobManagerLog) logCauses(t *testing.T) {
	t.Helper()
	b, _ := os.ReadFile(string(l))
	for _, c := range failureCauses(string(b), 8) {
		t.Logf("JobManager: %.600s", c)
	}
}

// failureCauses returns, for each "to FAILED" line of a Flink log (at
// most max of them), that line and the "Caused by" lines that follow it
// before the next log record.
func failureCauses(log string, max int) []string {
	var out []string
	lines := strings.Split(log, "\n")
	for i := 0; i < len(lines) && len(out) < max; i++ {
		if !strings.Contains(lines[i], "to FAILED") {
			continue
		}
		c := []string{strings.TrimSpace(lines[i])}
		for j := i + 1; j < len(lines) && !startsRecord(lines[j]); j++ {
			if s := strings.TrimSpace(lines[j]); strings.HasPrefix(s, "Caused by:") {
				c = append(c, s)
			}
		}
		out = append(out, strings.Join(c, " | "))
	}
	return out
}

// startsRecord reports whether a Flink log line begins a record (a date
// such as "2026-12-03 17:46:41,271"), not a stack trace's continuation.
func startsRecord(line string) bool {
	return len(line) > 4 && line[0] >= '0' && line[0] <= '9' && line[4] == '-'
}

func TestFailureCauses(t *testing.T) {
	log := strings.Join([]string{
		"2026-12-03 17:46:41,271 INFO  x - Source (1/2) switched from RUNNING to FAILED on tm-1 with failure cause:",
		"java.lang.RuntimeException: bundle failed",
		"\tat org.apache.beam.Foo.bar(Foo.java:1)",
		"Caused by: java.lang.IllegalStateException: control stream closed",
		"2026-12-03 17:46:41,300 INFO  x - Job j switched from state RUNNING to RESTARTING.",
		"2026-12-03 17:46:50,000 INFO  x - Sink (2/2) switched from RUNNING to FAILED on tm-2.",
	}, "\n")
	got := failureCauses(log, 8)
	if len(got) != 2 {
		t.Fatalf("got %d causes, want 2: %q", len(got), got)
	}
	if !strings.Contains(got[0], "Source (1/2)") || !strings.Contains(got[0], "Caused by: java.lang.IllegalStateException") {
		t.Errorf("first cause %q: want the task and its Caused by line", got[0])
	}
	if strings.Contains(got[1], "Caused by") {
		t.Errorf("second cause %q took a Caused by line of another record", got[1])
	}
	if n := len(failureCauses(log, 1)); n != 1 {
		t.Errorf("max 1: got %d causes", n)
	}
}
