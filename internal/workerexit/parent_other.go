//go:build !linux

package workerexit

import "os"

// exitWithParent exits when the parent process changes (it died and this
// process was re-parented); only Linux has a kernel parent-death signal.
func exitWithParent() {
	watchParent(os.Getppid(), os.Getppid, func() { os.Exit(1) })
}
