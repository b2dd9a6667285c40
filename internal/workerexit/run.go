package workerexit

import (
	"fmt"
	"os"

	harnessinit "github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/harness/init"
)

// Run serves a Beam worker and returns the process exit code: serve is
// beam.Init() in a process started with --worker=true (flags parsed). Run
// does not return when the harness ends normally, the parent dies, the
// control stream stays idle (IdleExitEnv) or an outstanding instruction
// stalls (StallExitEnv): it exits the process (0, or
// killed by SIGKILL on the parent's death). It
// returns 1 when the harness failed, after its message reached stderr.
func Run(serve func()) int {
	exitWithParent()
	if err := removeBootCopy(executable(), bootTmp); err != nil {
		fmt.Fprintf(os.Stderr, "workerexit: %v\n", err)
	}
	wait, err := exitAfterHarness(func() { os.Exit(0) })
	if err != nil {
		fmt.Fprintf(os.Stderr, "workerexit: %v\n", err)
		if err := exitWhenIdle(func() { os.Exit(0) }); err != nil {
			fmt.Fprintf(os.Stderr, "workerexit: idle exit off: %v\n", err)
		}
		serve()
		return 1
	}
	// wait first: the idle message must get through the stderr pipe.
	if err := exitWhenIdle(func() { wait(); os.Exit(0) }); err != nil {
		fmt.Fprintf(os.Stderr, "workerexit: idle exit off: %v\n", err)
	}
	// In Return mode a failed or panicking harness returns from serve (after
	// printing why) instead of calling os.Exit itself, which would lose the
	// message still in our stderr pipe.
	harnessinit.ShutdownMode = harnessinit.Return
	serve()
	wait()
	return 1
}

func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
