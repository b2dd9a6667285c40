package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	netnsScript = "../deploy/flink/netns-cluster.sh"
	hostsScript = "../deploy/flink/hosts.sh"
	// hostsKey is the fixed pseudonym key of every run (64 hex digits).
	hostsKey = "5eed5eed00112233445566778899aabbccddeeff0123456789abcdef01234567"
)

// netnsCluster is deploy/flink/netns-cluster.sh's cluster: the object store,
// the JobManager, each TaskManager, the job server and the launcher on hosts
// of their own (deploy/flink/hosts.sh) under dir.
type netnsCluster struct {
	dir string
	env []string
	// ctx, when set, ends every script call when it is cancelled.
	ctx context.Context
	// deadline is go test's (zero: none): script calls end a while
	// before it, so that the test fails with its cleanup run (a test
	// that times out leaves its temporary directory behind).
	deadline time.Time
}

// scriptTimeout bounds every call of a deploy script, a job included
// (several times a job's usual length): a hung call fails the test
// instead of waiting for go test's timeout, and the teardown ends the
// hosts.
const scriptTimeout = 10 * time.Minute

// script runs a deploy script with the cluster's environment.
func (c *netnsCluster) script(script string, args ...string) ([]byte, error) {
	parent := c.ctx
	if parent == nil {
		parent = context.Background()
	}
	timeout := scriptTimeout
	if !c.deadline.IsZero() {
		timeout = min(timeout, max(time.Until(c.deadline)-2*time.Minute, time.Second))
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Env = c.env
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if parent.Err() != nil {
		err = fmt.Errorf("%s %s: cancelled", filepath.Base(script), args[0])
	} else if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: no answer within %v", filepath.Base(script), args[0], timeout.Round(time.Second))
	}
	return out, err
}

// netns runs netns-cluster.sh CMD DIR ARGS.
func (c *netnsCluster) netns(cmd string, args ...string) ([]byte, error) {
	return c.script(netnsScript, append([]string{cmd, c.dir}, args...)...)
}

// hosts runs hosts.sh CMD DIR ARGS.
func (c *netnsCluster) hosts(cmd string, args ...string) ([]byte, error) {
	return c.script(hostsScript, append([]string{cmd, c.dir}, args...)...)
}

// launch runs netns-cluster.sh CMD (smoothanon or run) on the launcher
// host, and returns its output and exit code.
func (c *netnsCluster) launch(t *testing.T, cmd string, args ...string) (string, int) {
	t.Helper()
	out, err := c.netns(cmd, args...)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("netns-cluster.sh %s: %v\n%s", cmd, err, tail(out, 3000))
	return "", 0
}

// hostNames lists the hosts that were started, the switch left out.
func (c *netnsCluster) hostNames() []string {
	files, _ := filepath.Glob(filepath.Join(c.dir, "*.log"))
	var names []string
	for _, f := range files {
		if n := strings.TrimSuffix(filepath.Base(f), ".log"); n != "switch" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// processes lists the PIDs (as this PID namespace numbers them) of the
// processes on host, its PID 1 aside, from hosts.sh ps's "NAME PID" lines;
// anything else on its standard output is an error.
func (c *netnsCluster) processes(host string) ([]int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", hostsScript, "ps", c.dir, host)
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("hosts.sh ps %s: %v\n%s", host, err, stderr.Bytes())
	}
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		pid, err := 0, error(nil)
		if len(f) == 2 {
			pid, err = strconv.Atoi(f[1])
		}
		if len(f) != 2 || f[0] != host || err != nil || pid <= 0 {
			return nil, fmt.Errorf("hosts.sh ps %s: unexpected line %q", host, line)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// rootPID returns the PID in this (the machine's) PID namespace of the
// process that host knows as nspid, or 0.
func (c *netnsCluster) rootPID(host string, nspid int) int {
	pids, _ := c.processes(host)
	for _, pid := range pids {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, line := range strings.Split(string(status), "\n") {
			if ids, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if ns := strings.Fields(ids); len(ns) > 1 && ns[len(ns)-1] == strconv.Itoa(nspid) {
					return pid
				}
			}
		}
	}
	return 0
}

// taskManagerPID is TaskManager n's PID in the machine's PID namespace.
func (c *netnsCluster) taskManagerPID(n int) int {
	host := fmt.Sprintf("tm%d", n)
	b, _ := os.ReadFile(filepath.Join(c.dir, host, "srv", "flink", fmt.Sprintf("taskmanager-%d.pid", n)))
	nspid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return c.rootPID(host, nspid)
}

// store is the GCS emulator's filesystem backend, on the store host's
// disk: each object is a file at BUCKET/NAME (its metadata in xattrs).
func (c *netnsCluster) store(path string) string {
	return filepath.Join(c.dir, "store", "srv", "gcs", filepath.FromSlash(path))
}

// storedObjects lists the objects the store holds, as BUCKET/NAME.
func (c *netnsCluster) storedObjects(t *testing.T) []string {
	t.Helper()
	var objects []string
	root := c.store("")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(path) == filepath.Clean(root) { // bucket metadata files
			return err
		}
		rel, _ := filepath.Rel(root, path)
		objects = append(objects, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// buildHostBinaries builds smoothanon as `make build` does (static,
// stripped: the launcher and --worker_binary) and Beam's Go boot loader.
func buildHostBinaries(t *testing.T, bin string) {
	t.Helper()
	for _, b := range [][]string{
		{"build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(bin, "smoothanon"), "../cmd/smoothanon"},
		{"build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(bin, "boot"), "github.com/apache/beam/sdks/v2/go/container"},
	} {
		cmd := exec.Command("go", b...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(b, " "), err, out)
		}
	}
}

// fakeGCSServer is the fake-gcs-server binary: on PATH, else in GOPATH/bin.
func fakeGCSServer() string {
	if p, err := exec.LookPath("fake-gcs-server"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return ""
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "bin", "fake-gcs-server")
	if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// TestFlinkHosts runs the pipeline on a Flink cluster whose processes share
// no disk (deploy/flink/netns-cluster.sh): the JobManager, each TaskManager
// with its Go workers, Beam's job server, the launcher and the object store
// (the fake-gcs-server binary) each run on a host of their own — network,
// mount and PID namespaces, their own /tmp and /srv, the machine's other
// files read-only — connected by a switch on 10.77.0.0/24. Input, release,
// report and the job's artifacts (the worker binary) pass through the
// store only. It requires, on the launcher host: a release byte for byte
// prism's (same input, fixed pseudonym key) from an undisturbed job and
// from one whose TaskManager 1 is killed in the middle (a new host takes
// its place), both verified; the staged artifacts removed after each job;
// and a job endpoint on an unplugged host failing the run within
// --connect_timeout (exit 3). After the test no process is left on any
// host and no file in any host's /tmp or /srv but the installed ones,
// Flink's logs and configuration (and what the killed TaskManager could not
// remove), and no object in the store but the input, the releases and the
// reports. make test runs it; make test-hosts runs it alone. It needs
// root; without it, namespaces, /srv, unshare, nsenter,
// ip, java, mvn, python3, the Flink job server or fake-gcs-server it
// skips, unless CI is set: then it fails.
func TestFlinkHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster on hosts of their own skipped in -short mode")
	}
	missing := func(msg string) {
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if os.Geteuid() != 0 {
		missing("the hosts test needs root: its hosts are Linux namespaces (unshare, nsenter, ip)")
	}
	for _, tool := range []string{"unshare", "nsenter", "ip", "java", "mvn", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing("the hosts test needs " + tool + " (util-linux, iproute2, JDK 17, Maven and Python 3)")
		}
	}
	if out, err := exec.Command("unshare", "--net", "--mount", "--pid", "--fork", "true").CombinedOutput(); err != nil {
		missing(fmt.Sprintf("the hosts test cannot create namespaces here (unshare: %v: %s)", err, bytes.TrimSpace(out)))
	}
	if st, err := os.Stat("/srv"); err != nil || !st.IsDir() {
		missing("the hosts test mounts each host's working directory on /srv, and this machine has none")
	}
	if flinkJobServer() == nil {
		missing("Flink job server not found: run deploy/flink/fetch-jobserver.sh")
	}
	fakeGCS := fakeGCSServer()
	if fakeGCS == "" {
		missing("fake-gcs-server not found: go install github.com/fsouza/fake-gcs-server@v1.56.1")
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	start := time.Now()
	buildHostBinaries(t, bin)
	t.Logf("binaries built in %v", time.Since(start).Round(time.Second))
	marker := processMarker(t)
	c := &netnsCluster{dir: filepath.Join(dir, "hosts"), env: append(os.Environ(),
		"BIN="+bin, "MARKER="+marker, "FAKE_GCS="+fakeGCS, fmt.Sprintf("HOSTS_OWNER=%d", os.Getpid()),
		// The bound on the runner's failover leaks (TestFlinkCluster).
		"IDLE_EXIT="+testIdleExit.String(), "STALL_EXIT="+testStallExit.String())}
	c.deadline, _ = t.Deadline()
	killed := "" // the host whose TaskManager was killed
	t.Cleanup(func() { c.teardown(t, marker, killed) })
	start = time.Now()
	if out, err := c.netns("up"); err != nil {
		t.Fatalf("netns-cluster.sh up: %v\n%s", err, out)
	} else {
		t.Logf("%s (%v)", bytes.TrimSpace(out), time.Since(start).Round(time.Second))
	}
	if err := os.WriteFile(filepath.Join(c.dir, "launcher", "srv", "key"), []byte(hostsKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// 2e4 generated user lists in 8 chunks.
	input := "gs://in/userlists.parquet"
	if out, code := c.launch(t, "smoothanon", "gen", "--model", "userlists", "--rows", "20000", "--columns", "5000",
		"--mean_degree", "8", "--zipf", "1.1", "--seed", "3", "--output", input); code != 0 {
		t.Fatalf("gen: exit %d\n%s", code, out)
	}
	flags := []string{"--input", input, "--k", "8", "--chunk_size", "2500", "--seed", "5", "--shards", "2",
		"--pseudonym_key_file", "/srv/key"}
	if out, code := c.launch(t, "smoothanon", append([]string{"run", "--output", "gs://out/prism",
		"--metrics_out", "gs://out/prism.json"}, flags...)...); code != 0 {
		t.Fatalf("prism: exit %d\n%s", code, tail([]byte(out), 3000))
	}
	_, want := readRelease(t, c.store("out/prism"))

	// check runs the job through the cluster into gs://out/NAME and
	// compares its shards with prism's byte for byte, by their names
	// without the run's token (release.StagedName; readRelease keys them
	// so).
	check := func(t *testing.T, name string) {
		t.Helper()
		start := time.Now()
		out, code := c.launch(t, "run", append([]string{"--output", "gs://out/" + name,
			"--metrics_out", "gs://out/" + name + ".json"}, flags...)...)
		t.Logf("job took %v", time.Since(start).Round(time.Second))
		if code != 0 {
			t.Fatalf("run: exit %d\n%s", code, tail([]byte(out), 5000))
		}
		_, got := readRelease(t, c.store("out/"+name))
		if len(got) != len(want) {
			t.Errorf("%s: %d shards, prism %d", name, len(got), len(want))
		}
		for shard, b := range want {
			if !bytes.Equal(got[shard], b) {
				t.Errorf("%s: shard %s differs from prism's", name, shard)
			}
		}
		rep := c.report(t, "out/"+name+".json")
		if rep.runner != "flink" || !rep.valid || !rep.published || rep.improved < 1 {
			t.Errorf("%s: report %+v: want runner flink, valid, published, a pool improved", name, rep)
		}
		if out, code := c.launch(t, "smoothanon", "verify", "--input", input, "--output", "gs://out/"+name,
			"--k", "8", "--pseudonym_key_file", "/srv/key"); code != 0 {
			t.Errorf("%s: verify: exit %d\n%s", name, code, tail([]byte(out), 2000))
		}
		// Beam's job server removes the job's staged artifacts when it
		// ends (netns-cluster.sh gives --worker_binary as a bare name:
		// with a path, Beam 2.62 leaves the binary behind).
		for _, o := range c.storedObjects(t) {
			if strings.HasPrefix(o, "staging/") {
				t.Errorf("%s: left in the staging bucket after the job: %s", name, o)
			}
		}
	}
	jm := jobManagerLog(filepath.Join(c.dir, "jm", "srv", "flink", "log", "jobmanager.log"))
	restarts := jm.restarts
	t.Run("release", func(t *testing.T) {
		check(t, "cluster")
		checkNoLeftovers(t, marker, bootOrWorker, "")
		if n := restarts(); n != 0 {
			t.Errorf("the undisturbed job restarted %d times", n)
			jm.logCauses(t)
		}
	})
	t.Run("lost-taskmanager", func(t *testing.T) {
		before := restarts()
		type kill struct{ note, err string }
		killedc := make(chan kill, 1)
		done := make(chan struct{})
		// Without a replacement TaskManager the job waits for slots that
		// never come: the run is then cancelled.
		ctx, cancel := context.WithCancel(context.Background())
		c.ctx = ctx
		defer func() { c.ctx = nil; cancel() }()
		go func() {
			note, err := c.killTaskManagerMidJob(marker, done)
			if err != "" && note != "" {
				cancel()
			}
			killedc <- kill{note, err}
		}()
		var k kill
		func() {
			// Also when check fails: the kill is over (or given up)
			// before the teardown runs.
			defer func() {
				close(done)
				if k = <-killedc; k.note != "" {
					killed = "tm1"
				}
			}()
			check(t, "lost")
		}()
		if k.err != "" {
			t.Fatal(k.err)
		}
		t.Logf("killed TaskManager 1 %s", k.note)
		n := restarts() - before
		if n == 0 {
			t.Errorf("the JobManager never restarted the job: the TaskManager was killed after it ended")
		}
		t.Logf("the job restarted %d times", n)
		// leakWait plus 20 s: these hosts share the machine's 2 cores with
		// whatever else runs.
		checkNoLeftoversWithin(t, leakWait+20*time.Second, marker, bootOrWorker, "")
	})
	t.Run("unreachable-endpoint", func(t *testing.T) {
		// A job endpoint on a host whose cable is cut.
		for _, args := range [][]string{{"start", "dark", "10.77.0.99/24"}, {"unplug", "dark"}} {
			if out, err := c.hosts(args[0], args[1:]...); err != nil {
				t.Fatalf("hosts.sh %s: %v\n%s", args[0], err, out)
			}
		}
		start := time.Now()
		out, code := c.launch(t, "smoothanon", append([]string{"run", "--runner", "flink", "--endpoint", "10.77.0.99:8099",
			"--connect_timeout", "5s", "--output", "gs://out/dark", "--metrics_out", "gs://out/dark.json"}, flags...)...)
		took := time.Since(start)
		t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
		if code != 3 || took > 20*time.Second || !strings.Contains(out, "job endpoint 10.77.0.99:8099 did not answer within 5s") {
			t.Errorf("unreachable endpoint: exit %d after %v:\n%s", code, took, tail([]byte(out), 2000))
		}
		if rep := c.report(t, "out/dark.json"); rep.published {
			t.Errorf("the failed run's report says published")
		}
	})
	// The store holds the input, the releases and the reports only (the
	// failed run's report included, nothing of its release).
	for _, o := range c.storedObjects(t) {
		if !regexp.MustCompile(`^(in/userlists\.parquet|out/(prism|cluster|lost)/.+|out/(prism|cluster|lost|dark)\.json)$`).MatchString(o) {
			t.Errorf("object left in the store: %s", o)
		}
	}
}

type hostsReport struct {
	runner           string
	valid, published bool
	improved         int
}

// report reads the fields of a run report (JSON) the test checks.
func (c *netnsCluster) report(t *testing.T, path string) hostsReport {
	t.Helper()
	b, err := os.ReadFile(c.store(path))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Valid, Published bool
		Pipeline         struct {
			Runner string
			Pool   struct {
				Improved string
			}
		}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	improved, _ := strconv.Atoi(r.Pipeline.Pool.Improved)
	return hostsReport{runner: r.Pipeline.Runner, valid: r.Valid, published: r.Published, improved: improved}
}

// killTaskManagerMidJob waits until Go workers run, then, preferably when
// TaskManager 2 starts an environment (see (*flinkCluster).killTaskManagerMidJob),
// kills TaskManager 1 with SIGKILL and starts TaskManager 3 on a new host.
// It waits for such a moment only envWait: this test's job is short, and a
// kill after it ended shows nothing. It gives up when done is closed first.
func (c *netnsCluster) killTaskManagerMidJob(marker string, done <-chan struct{}) (note, err string) {
	ended := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for len(markedProcesses(marker, "--worker=true")) == 0 {
		if ended() || time.Now().After(deadline) {
			return "", "no Go worker started during the job: the TaskManager was never killed"
		}
		time.Sleep(200 * time.Millisecond)
	}
	const envWait = 10 * time.Second
	note = fmt.Sprintf("%v after the first worker started (TaskManager 2 started no environment meanwhile)", envWait)
	tm2 := c.taskManagerPID(2)
	for end := time.Now().Add(envWait); time.Now().Before(end) && !ended(); time.Sleep(100 * time.Millisecond) {
		if id := startingEnvironment(marker, tm2); id != "" {
			note = "while TaskManager 2 started environment " + id
			break
		}
	}
	pid := c.taskManagerPID(1)
	if pid == 0 || syscall.Kill(pid, syscall.SIGKILL) != nil {
		return "", fmt.Sprintf("could not kill TaskManager 1 (PID %d)", pid)
	}
	// A replacement, on a new host. Once in 7 runs on a loaded machine
	// TaskManager 3's JVM ended within seconds of its start, silently (no
	// log line, no output): then TaskManager 4 takes its place.
	var failed []string
	for _, n := range []string{"3", "4"} {
		out, err := c.netns("taskmanager", n)
		if err == nil {
			if len(failed) > 0 {
				note += "; " + strings.Join(failed, "; ")
			}
			return note, ""
		}
		failed = append(failed, fmt.Sprintf("TaskManager %s did not start: %v: %s", n, err, bytes.TrimSpace(out)))
	}
	return note, strings.Join(failed, "\n")
}

// teardown stops every process gracefully, then requires that no process
// is left on any host and no file in any host's /tmp or /srv but what the
// hosts were given, Flink's logs and configuration and the store's data
// (on the host killed, also what its TaskManager could not remove), then
// ends the hosts.
func (c *netnsCluster) teardown(t *testing.T, marker, killed string) {
	if t.Failed() {
		c.logTails(t)
	}
	if out, err := c.netns("stop"); err != nil {
		t.Errorf("netns-cluster.sh stop: %v\n%s", err, out)
	}
	for _, h := range c.hostNames() {
		// cluster.sh stop waits up to 15 s for each JVM, then SIGKILLs its
		// process group; what the kernel has not reaped yet may still show.
		var pids []int
		var err error
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			if pids, err = c.processes(h); err != nil || len(pids) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Error(err)
		}
		for _, pid := range pids {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("host %s: process left after stop: %d %.300s", h, pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		}
		c.checkHostFiles(t, h, h == killed)
	}
	if out, err := c.netns("down"); err != nil {
		t.Errorf("netns-cluster.sh down: %v\n%s", err, out)
	}
	checkNoLeftovers(t, marker, "", "")
}

// hostFiles are the files a host may keep under /srv: what it was given
// (bin, key), Flink's configuration and logs, the job server's source and
// the store's data and log.
var hostFiles = regexp.MustCompile(`^(bin|key|flink/(conf|log|EmulatorJobServer\.java)|gcs|gcs\.log)(/|$)`)

// checkHostFiles fails t for every file left in host's /tmp (empty
// directories of the JVM's perf data aside) or /srv (hostFiles aside). A
// killed TaskManager's JVM files and Flink's temporary files may stay.
func (c *netnsCluster) checkHostFiles(t *testing.T, host string, killed bool) {
	t.Helper()
	for _, mount := range []string{"tmp", "srv"} {
		root := filepath.Join(c.dir, host, mount)
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || path == root {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			switch {
			case mount == "tmp" && d.IsDir() && strings.HasPrefix(rel, "hsperfdata_"):
				if !killed {
					return nil // its files are checked one by one
				}
				t.Logf("host %s: the killed TaskManager left /tmp/%s", host, rel)
				return filepath.SkipDir
			case mount == "tmp" && killed && strings.HasPrefix(rel, "liblz4-java"):
				t.Logf("host %s: the killed TaskManager left /tmp/%s", host, rel)
				return nil
			case mount == "srv" && hostFiles.MatchString(rel):
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			case mount == "srv" && d.IsDir() && (rel == "flink" || rel == "flink/tmp"):
				return nil
			case mount == "srv" && killed && strings.HasPrefix(rel, "flink/tmp/"):
				t.Logf("host %s: the killed TaskManager left /srv/%s", host, rel)
				return filepath.SkipDir
			}
			t.Errorf("host %s: left in /%s: %s", host, mount, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		})
	}
}

// logTails logs the end of every host's logs.
func (c *netnsCluster) logTails(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join(c.dir, "*", "srv", "flink", "log", "*"))
	logs = append(logs, filepath.Join(c.dir, "store", "srv", "gcs.log"))
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil && len(b) > 0 {
			rel, _ := filepath.Rel(c.dir, l)
			t.Logf("%s:\n%s", rel, tail(b, 3000))
		}
	}
}
