package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/internal/workerexit"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
)

const clusterScript = "../deploy/flink/cluster.sh"

// flinkCluster is a session cluster started by deploy/flink/cluster.sh.
type flinkCluster struct {
	run, marker string
	env         []string
}

// script runs cluster.sh with args and the cluster's environment.
func (c *flinkCluster) script(args ...string) ([]byte, error) {
	cmd := exec.Command("bash", append([]string{clusterScript}, args...)...)
	cmd.Env = c.env
	return cmd.CombinedOutput()
}

func (c *flinkCluster) pid(name string) int {
	b, _ := os.ReadFile(filepath.Join(c.run, name+".pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// startFlinkCluster starts a JobManager and two TaskManagers on free ports
// with marker in their environment, and stops them when t ends.
func startFlinkCluster(t *testing.T, dir, marker string) *flinkCluster {
	t.Helper()
	c := &flinkCluster{run: filepath.Join(dir, "cluster"), marker: marker}
	c.env = append(os.Environ(), marker, fmt.Sprintf("REST_PORT=%d", freePort(t)), fmt.Sprintf("RPC_PORT=%d", freePort(t)))
	out, err := c.script("start", c.run)
	t.Cleanup(func() {
		if out, err := c.script("stop", c.run); err != nil {
			t.Errorf("cluster.sh stop: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("cluster.sh start: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
	return c
}

func (c *flinkCluster) restPort() string {
	for _, kv := range c.env {
		if p, ok := strings.CutPrefix(kv, "REST_PORT="); ok {
			return p
		}
	}
	return ""
}

// userListsFixture is 20,000 generated user lists in four files and
// prism's release of them.
func userListsFixture(t *testing.T) *runnerFixture {
	t.Helper()
	dir := t.TempDir()
	m, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 20000, Columns: 5000, MeanDegree: 8, Zipf: 1.1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for part, lo := 0, 0; lo < m.NumRows(); part++ {
		hi := min(m.NumRows(), lo+5000)
		sub := matrix.New(hi-lo, 0)
		for i := lo; i < hi; i++ {
			sub.Append(m.Users[i], m.Row(i))
		}
		path := filepath.Join(dir, fmt.Sprintf("in-%d.parquet", part))
		if err := matrix.WriteMatrix(path, sub, matrix.WriterOptions{RowGroupRows: 1000}); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
		lo = hi
	}
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "prism"),
		Solver: solver.Params{K: 8, Seed: 5}, ChunkSize: 2500, Shards: 2,
		PoolShare: DefaultPoolShare}
	runOK(t, p)
	_, want := readRelease(t, p.Output)
	return &runnerFixture{dir: dir, in: m, params: p, want: want}
}

// TestFlinkCluster runs the pipeline on a standalone Flink session cluster
// (deploy/flink/cluster.sh: a JobManager and two TaskManagers as separate
// java processes) through Beam's Flink job server with --flink-master
// pointing at it and Go workers in a PROCESS environment, and requires
// prism's release byte for byte: once undisturbed, once with a TaskManager
// killed by its PID in the middle of the job and a replacement started.
// After each job no boot loader or worker may run on (after the failover
// within leakWait, the workers' idle time plus margin), and after the test
// no process it started may run and no copy of the worker binary is left.
func TestFlinkCluster(t *testing.T) {
	launch := flinkJobServer()
	if testing.Short() {
		t.Skip("Flink cluster test skipped in -short mode")
	}
	missing := func(msg string) {
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing("Flink cluster test needs " + tool + " (JDK 17 and Maven)")
		}
	}
	if launch == nil {
		missing("Flink job server not found: run deploy/flink/fetch-jobserver.sh")
	}
	f := userListsFixture(t)
	marker := processMarker(t)
	t.Cleanup(func() { checkNoLeftovers(t, marker, "", "") }) // after everything stopped
	c := startFlinkCluster(t, f.dir, marker)
	endpoint := startFlinkJobServer(t, launch, f.dir, marker,
		"--flink-master=localhost:"+c.restPort(), "--flink-conf-dir="+filepath.Join(c.run, "conf"))

	// PROCESS workers: process-boot.sh runs Beam's Go boot loader, which
	// fetches the staged worker binary — this test binary, whose TestMain
	// serves as a worker — and starts it with --worker=true.
	bin := t.TempDir()
	boot := filepath.Join(bin, "boot")
	if out, err := exec.Command("go", "build", "-o", boot, "github.com/apache/beam/sdks/v2/go/container").CombinedOutput(); err != nil {
		t.Fatalf("go build boot: %v\n%s", err, out)
	}
	wrapper, err := filepath.Abs("../deploy/flink/process-boot.sh")
	if err != nil {
		t.Fatal(err)
	}
	worker, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, wb := *jobopts.EnvironmentConfig, *jobopts.WorkerBinary
	*jobopts.EnvironmentConfig = fmt.Sprintf(`{"command": %q, "env": {"BEAM_GO_BOOT": %q, %q: %q, %q: %q}}`,
		wrapper, boot, workerexit.IdleExitEnv, testIdleExit.String(), workerexit.StallExitEnv, testStallExit.String())
	*jobopts.WorkerBinary = worker
	defer func() { *jobopts.EnvironmentConfig, *jobopts.WorkerBinary = cfg, wb }()

	jm := jobManagerLog(filepath.Join(c.run, "log", "jobmanager.log"))
	restarts := jm.restarts
	t.Run("release", func(t *testing.T) {
		start := time.Now()
		f.checkEnv(t, "flink", endpoint, "PROCESS")
		t.Logf("job took %v", time.Since(start).Round(time.Second))
		checkNoLeftovers(t, marker, bootOrWorker, worker)
		checkNoSharedStaging(t, worker, start)
		// An environment the runner still uses must never look idle to
		// its worker: that would fail a bundle and restart the job.
		if n := restarts(); n != 0 {
			t.Errorf("the undisturbed job restarted %d times", n)
			jm.logCauses(t)
		}
	})
	t.Run("lost-taskmanager", func(t *testing.T) {
		before := restarts()
		type kill struct{ note, err string }
		killed := make(chan kill, 1)
		go func() {
			note, err := c.killTaskManagerMidJob(marker)
			killed <- kill{note, err}
		}()
		start := time.Now()
		f.checkAs(t, "flink-lost-taskmanager", "flink", endpoint, "PROCESS")
		t.Logf("job took %v", time.Since(start).Round(time.Second))
		k := <-killed
		if k.err != "" {
			t.Fatal(k.err)
		}
		t.Logf("killed TaskManager 1 %s", k.note)
		// The kill must have hit the running job, not a finished one.
		n := restarts() - before
		if n == 0 {
			t.Errorf("the JobManager never restarted the job: the TaskManager was killed after it ended")
		}
		t.Logf("the job restarted %d times", n)
		// No boot loader or worker of either attempt may outlive the job
		// for long, the cluster still up: the killed TaskManager's end with
		// it (process-boot.sh watches its parent), and an environment the
		// runner never closes after the failover ends with its worker's
		// idle exit (internal/workerexit).
		for _, p := range markedProcesses(marker, bootOrWorker) {
			t.Logf("running right after the job (%s): %.200s", c.owner(p), p)
		}
		checkNoLeftoversWithin(t, leakWait, marker, bootOrWorker, worker)
		checkNoSharedStaging(t, worker, start)
	})
}

// The Go workers' idle and stall exits in the cluster tests
// (workerexit.IdleExitEnv, StallExitEnv; process-boot.sh's defaults are 5m
// and 30m). They bound how long the runner's failover leaks live, and must
// exceed any real wait of the undisturbed job, or a worker the runner
// still uses exits and the job restarts: the stall exit ends a bundle that
// waits for its upstream stage, which on this shared 2-core machine under
// CI's other tests can take far longer than the stage's own work.
const (
	testIdleExit  = 30 * time.Second
	testStallExit = 60 * time.Second
)

// leakWait is how long after the job with the lost TaskManager its boot
// loaders and workers may still run: the later of the workers' idle and
// stall exits after their last bundle or message, plus the boot loader's
// exit (seen to take up to ~15 s), and under the 2 minutes a boot loader
// of the killed TaskManager waits for its dead provisioning endpoint
// without process-boot.sh's parent watch.
const leakWait = max(testIdleExit, testStallExit) + 20*time.Second

// killTaskManagerMidJob waits until Go workers run, then, preferably at a
// moment when TaskManager 2 starts an environment (a stage's open() waits
// for its worker: the cancellation fails it, and Flink never calls the
// stage's close(), so Beam's runner never closes the job's environments on
// that TaskManager), kills TaskManager 1 by its PID and starts TaskManager
// 3 in its place. It returns when the kill happened, and what went wrong.
func (c *flinkCluster) killTaskManagerMidJob(marker string) (note, err string) {
	deadline := time.Now().Add(5 * time.Minute)
	for len(markedProcesses(marker, "--worker=true")) == 0 {
		if time.Now().After(deadline) {
			return "", "no Go worker started within 5 minutes: the TaskManager was never killed"
		}
		time.Sleep(200 * time.Millisecond)
	}
	note = "2 s after the first worker started (TaskManager 2 started no environment within 60 s)"
	tm2 := c.pid("taskmanager-2")
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if id := startingEnvironment(marker, tm2); id != "" {
			note = "while TaskManager 2 started environment " + id
			break
		}
	}
	if !strings.HasPrefix(note, "while") {
		time.Sleep(2 * time.Second)
	}
	pid := c.pid("taskmanager-1")
	if pid == 0 || syscall.Kill(pid, syscall.SIGKILL) != nil {
		return "", fmt.Sprintf("could not kill TaskManager 1 (PID %d)", pid)
	}
	if out, err := c.script("taskmanager", c.run, "3"); err != nil {
		return note, fmt.Sprintf("starting a replacement TaskManager: %v\n%s", err, out)
	}
	return note, ""
}

// startingEnvironment returns the worker ID of a boot loader in process
// group pgid (a TaskManager's) that has not started its worker yet, or "".
func startingEnvironment(marker string, pgid int) string {
	boots, workers := map[string]bool{}, map[string]bool{}
	for _, p := range markedProcesses(marker, bootOrWorker) {
		f := strings.Fields(p)
		pid, _ := strconv.Atoi(f[0])
		if _, g := procIDs(pid); g != pgid {
			continue
		}
		var id string
		for _, a := range f[1:] {
			if v, ok := strings.CutPrefix(a, "--id="); ok {
				id = v
			}
		}
		switch {
		case strings.Contains(p, "--worker=true"):
			workers[id] = true
		case strings.Contains(p, "--provision_endpoint") && !strings.Contains(p, "process-boot.sh"):
			boots[id] = true
		}
	}
	for id := range boots {
		if !workers[id] {
			return id
		}
	}
	return ""
}

// owner names the TaskManager whose process group holds the process p
// ("PID cmdline").
func (c *flinkCluster) owner(p string) string {
	pid, _ := strconv.Atoi(strings.Fields(p)[0])
	_, pgid := procIDs(pid)
	for _, n := range []string{"1", "2", "3"} {
		if pgid != 0 && pgid == c.pid("taskmanager-"+n) {
			return "TaskManager " + n
		}
	}
	return fmt.Sprintf("process group %d", pgid)
}
