// Package memlimit sets the Go runtime's soft memory limit from the memory
// limit of the cgroup (container) the process runs in.
//
// Go does not read a container's memory limit: without GOMEMLIMIT its
// garbage collector lets the heap grow to twice what is live before it
// collects. A worker's live heap is mostly the compact encoded chunks the
// runner has already pushed to it, so that headroom, not the data, is what
// would take a worker over its container's limit and get it killed. With
// a soft limit below the container's, the collector runs more often as
// the heap nears it instead.
package memlimit

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// Fraction is the share of the cgroup's limit given to Go as its soft
// limit; the rest covers what the runtime does not count (stacks in use,
// fragmentation, the binary) and bursts between collections.
const Fraction = 0.75

// Apply sets the soft memory limit to Fraction of the process's cgroup
// memory limit and returns it, unless GOMEMLIMIT is set (Go applies that
// itself) or no limit is found (0).
func Apply() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit, err := CgroupLimit(os.DirFS("/"))
	if err != nil || limit == 0 {
		return 0
	}
	soft := int64(float64(limit) * Fraction)
	debug.SetMemoryLimit(soft)
	return soft
}

// CgroupLimit returns the memory limit in bytes of the cgroup of the
// process whose /proc/self/cgroup and /sys/fs/cgroup fsys holds (rooted at
// /), cgroup v2 or v1; 0 when the cgroup has none. A cgroup is bound by
// its ancestors' limits too, so the limit is the smallest found on the
// way from the process's cgroup up to the mount's root (where a container
// sees its own cgroup).
func CgroupLimit(fsys fs.FS) (int64, error) {
	v1, v2, err := cgroupPaths(fsys)
	if err != nil {
		return 0, err
	}
	var tries []string
	if v2 != "" {
		tries = append(tries, upward("sys/fs/cgroup", v2, "memory.max")...)
	}
	if v1 != "" {
		tries = append(tries, upward("sys/fs/cgroup/memory", v1, "memory.limit_in_bytes")...)
	}
	var limit int64
	for _, f := range tries {
		b, err := fs.ReadFile(fsys, f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		n, err := parseLimit(strings.TrimSpace(string(b)), f)
		if err != nil {
			return 0, err
		}
		if n > 0 && (limit == 0 || n < limit) {
			limit = n
		}
	}
	return limit, nil
}

// upward lists the file name in the cgroup dir below mount and in each of
// its ancestors, the mount itself last.
func upward(mount, dir, name string) []string {
	var files []string
	for d := path.Clean("/" + dir); ; d = path.Dir(d) {
		files = append(files, path.Join(mount, d, name))
		if d == "/" {
			return files
		}
	}
}

// cgroupPaths reads the process's v1 memory cgroup and v2 cgroup from
// /proc/self/cgroup ("" when absent).
func cgroupPaths(fsys fs.FS) (v1, v2 string, err error) {
	f, err := fsys.Open("proc/self/cgroup")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-id:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			v1 = parts[2]
		}
	}
	return v1, v2, sc.Err()
}

// parseLimit reads a cgroup limit file's value: "max" (v2) or a value at
// least 2^62 (v1's "unlimited", a page-rounded MaxInt64) is no limit.
func parseLimit(s, file string) (int64, error) {
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("memlimit: %s: %q is not a limit", file, s)
	}
	if n <= 0 || n >= math.MaxInt64>>1 {
		return 0, nil
	}
	return n, nil
}
