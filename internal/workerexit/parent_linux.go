package workerexit

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// exitWithParent has the kernel SIGKILL this process when its parent (the
// boot loader, or the runner that started the worker directly) dies, and
// starts a parent-PID watch as a fallback: PR_SET_PDEATHSIG follows the
// parent *thread* and is not inherited across some exec paths.
func exitWithParent() {
	ppid := os.Getppid()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "workerexit: prctl(PR_SET_PDEATHSIG): %v\n", err)
	}
	watchParent(ppid, os.Getppid, func() { os.Exit(1) })
}
