package workerexit

import "time"

// watchEvery is how often watchParent looks at the parent PID.
var watchEvery = time.Second

// watchParent calls exit, from a goroutine, as soon as getppid no longer
// returns ppid: the parent died and the process was re-parented (to PID 1
// or a subreaper). A ppid of 1 at start (a container's boot loader is
// PID 1) never changes, which is right: that parent cannot die alone.
func watchParent(ppid int, getppid func() int, exit func()) {
	go func() {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for range t.C {
			if getppid() != ppid {
				exit()
				return
			}
		}
	}()
}
