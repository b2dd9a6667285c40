package container

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// engine runs podman with a containers.conf of the test's own: runc and
// cgroupfs (no systemd in a CI container), ulimits podman can set without
// privileges beyond the sandbox's, and the test's data directory mounted at
// its own path into every container — also those prism starts through the
// Docker API, which mounts nothing itself, while the workers must read the
// input and write the release at the paths the launcher names. Logs go to
// files (the default, journald, keeps none without systemd).
type engine struct {
	conf string // CONTAINERS_CONF
}

// newEngine skips the test when podman is absent (fails under CI, which
// installs it) and writes the containers.conf into dir.
func newEngine(t *testing.T, dir, data string) *engine {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		msg := "podman not found: the container image tests need it (apt-get install podman buildah runc)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	conf := filepath.Join(dir, "containers.conf")
	body := fmt.Sprintf(`[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
volumes = [%q]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`, data+":"+data)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return &engine{conf: conf}
}

func (e *engine) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, "podman", args...)
	c.Env = append(os.Environ(), "CONTAINERS_CONF="+e.conf)
	return c
}

// run runs podman and returns its stdout; it fails the test, with podman's
// output, when podman fails.
func (e *engine) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	c := e.cmd(ctx, args...)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, tail(stdout.String()), tail(stderr.String()))
	}
	return stdout.String()
}

// quiet runs podman for cleanup and ignores its outcome.
func (e *engine) quiet(args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e.cmd(ctx, args...).Run()
}

func tail(s string) string {
	const n = 4000
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
