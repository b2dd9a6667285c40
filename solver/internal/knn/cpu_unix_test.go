//go:build unix

package knn

import (
	"syscall"
	"time"
)

// cpuTime is the user+system CPU time of this process so far.
func cpuTime() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
