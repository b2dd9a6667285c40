package memlimit

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestCgroupLimit(t *testing.T) {
	const unlimitedV1 = "9223372036854771712\n"
	for _, c := range []struct {
		name    string
		files   map[string]string
		want    int64
		wantErr string
	}{
		{"v2 container", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "2147483648\n"}, 2147483648, ""},
		{"v2 unlimited", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "max\n"}, 0, ""},
		{"v2 own cgroup first", map[string]string{"proc/self/cgroup": "0::/job/run\n",
			"sys/fs/cgroup/memory.max": "max\n", "sys/fs/cgroup/job/run/memory.max": "1073741824\n"}, 1073741824, ""},
		{"v2 parent's limit binds", map[string]string{"proc/self/cgroup": "0::/pod/job/run\n",
			"sys/fs/cgroup/pod/memory.max": "1000000\n", "sys/fs/cgroup/pod/job/memory.max": "max\n", "sys/fs/cgroup/pod/job/run/memory.max": "3000000\n"}, 1000000, ""},
		{"v2 own limit below the root's", map[string]string{"proc/self/cgroup": "0::/a\n",
			"sys/fs/cgroup/memory.max": "5000000\n", "sys/fs/cgroup/a/memory.max": "4000000\n"}, 4000000, ""},
		{"v1 parent's limit binds", map[string]string{"proc/self/cgroup": "4:memory:/kubepods/pod1/c1\n",
			"sys/fs/cgroup/memory/kubepods/pod1/memory.limit_in_bytes": "7000\n", "sys/fs/cgroup/memory/kubepods/pod1/c1/memory.limit_in_bytes": unlimitedV1}, 7000, ""},
		{"v1 own cgroup", map[string]string{"proc/self/cgroup": "9:pids:/\n4:memory:/bench\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": unlimitedV1, "sys/fs/cgroup/memory/bench/memory.limit_in_bytes": "2147483648\n"}, 2147483648, ""},
		{"v1 unlimited", map[string]string{"proc/self/cgroup": "4:memory:/\n", "sys/fs/cgroup/memory/memory.limit_in_bytes": unlimitedV1}, 0, ""},
		{"v1 joint controllers", map[string]string{"proc/self/cgroup": "4:cpu,memory:/x\n", "sys/fs/cgroup/memory/x/memory.limit_in_bytes": "5000\n"}, 5000, ""},
		{"v1 container root", map[string]string{"proc/self/cgroup": "4:memory:/docker/abc\n", "sys/fs/cgroup/memory/memory.limit_in_bytes": "3000\n"}, 3000, ""},
		{"no cgroup files", map[string]string{"proc/self/cgroup": "0::/\n"}, 0, ""},
		{"junk in an ancestor", map[string]string{"proc/self/cgroup": "0::/a/b\n", "sys/fs/cgroup/a/memory.max": "x\n"}, 0, `sys/fs/cgroup/a/memory.max: "x" is not a limit`},
		{"junk", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "lots\n"}, 0, `"lots" is not a limit`},
		{"no proc", map[string]string{}, 0, "cgroup"},
	} {
		fsys := fstest.MapFS{}
		for name, data := range c.files {
			fsys[name] = &fstest.MapFile{Data: []byte(data)}
		}
		got, err := CgroupLimit(fsys)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one with %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: CgroupLimit = %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}

func TestApplyLeavesGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := Apply(); got != 0 {
		t.Errorf("Apply with GOMEMLIMIT set = %d, want 0 (Go applies GOMEMLIMIT)", got)
	}
}
