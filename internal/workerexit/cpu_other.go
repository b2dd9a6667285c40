//go:build !unix

package workerexit

import "time"

// cpuTime reports no CPU time where getrusage is missing: every watch tick
// then counts as work, and the stall exit never fires.
func cpuTime() (time.Duration, bool) { return 0, false }
