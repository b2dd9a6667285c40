package release

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestTrapSignals: the first signal cancels with an InterruptedError
// naming it (exit 130 for SIGINT); stop may be called twice.
func TestTrapSignals(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := TrapSignals(cancel)
	defer stop()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not cancel")
	}
	var ie *InterruptedError
	if !errors.As(context.Cause(ctx), &ie) || ie.Signal != syscall.SIGINT || ie.ExitCode() != 130 {
		t.Errorf("cause %v, want an InterruptedError for SIGINT, exit 130", context.Cause(ctx))
	}
	stop()
}

// TestTrapSignalsSecondKills: after the first signal the default is
// back, so a second one ends the process (a user's second Ctrl-C).
func TestTrapSignalsSecondKills(t *testing.T) {
	if os.Getenv("SMOOTHANON_TRAP_CHILD") == "1" {
		ctx, cancel := context.WithCancelCause(context.Background())
		TrapSignals(cancel)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		<-ctx.Done()
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(10 * time.Second)
		os.Exit(0) // the second signal was swallowed
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrapSignalsSecondKills$")
	cmd.Env = append(os.Environ(), "SMOOTHANON_TRAP_CHILD=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v, want killed by SIGTERM", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("child ended %v, want killed by the second SIGTERM", err)
	}
}
