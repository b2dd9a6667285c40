package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// runnerFixture is a small input and the release embedded prism makes of it.
type runnerFixture struct {
	dir    string
	in     *matrix.Matrix
	params Params
	want   map[string][]byte
}

func newRunnerFixture(t *testing.T) *runnerFixture {
	dir := t.TempDir()
	in, files := writeInput(t, dir, gen.SBMParams{N: 900, S: 30, Q: 0.5, P: 0.01, Seed: 11})
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "prism"),
		Solver: solver.Params{K: 4, Seed: 5}, ChunkSize: 250, Shards: 2,
		PoolShare: DefaultPoolShare}
	requireImprovedPool(t, "prism", runOK(t, p).Report)
	_, want := readRelease(t, p.Output)
	return &runnerFixture{dir: dir, in: in, params: p, want: want}
}

// requireImprovedPool fails unless the run's pools replaced a release, so
// that the runners compare releases that went through the pool stage.
func requireImprovedPool(t *testing.T, runner string, rep *smoothanonpb.RunReport) {
	t.Helper()
	pl := rep.GetPipeline().GetPool()
	if pl.GetImproved() < 1 || pl.GetShare() != DefaultPoolShare || rep.Jaccard <= pl.GetJaccardBefore() {
		t.Fatalf("%s: no pool improved the release: %v (J %.4f)", runner, pl, rep.Jaccard)
	}
}

// check runs the fixture on another runner with LOOPBACK workers and
// compares the release with prism's byte for byte, then verifies it.
func (f *runnerFixture) check(t *testing.T, runner, endpoint string) {
	t.Helper()
	f.checkEnv(t, runner, endpoint, "LOOPBACK")
}

// checkEnv is check with the given --environment_type.
func (f *runnerFixture) checkEnv(t *testing.T, runner, endpoint, env string) {
	t.Helper()
	f.checkAs(t, runner+"-"+env, runner, endpoint, env)
}

// checkAs is checkEnv writing the release to the directory name. The
// runner writes each shard from about 8 runs (transforms.Write), prism's
// release was written straight: the bytes must match all the same.
func (f *runnerFixture) checkAs(t *testing.T, name, runner, endpoint, env string) {
	t.Helper()
	p := f.params
	p.Output = filepath.Join(f.dir, name)
	p.Runner, p.Endpoint, p.EnvironmentType = runner, endpoint, env
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res := func() *Result {
		res, err := run(ctx, p, hooks{runRows: int64(max(1, f.in.NumRows()/16))})
		if err != nil {
			t.Fatalf("%s: %v", runner, err)
		}
		return res
	}()
	if res.Report.Pipeline.Runner != runner {
		t.Errorf("report runner %q, want %q", res.Report.Pipeline.Runner, runner)
	}
	if p.PoolShare > 0 {
		requireImprovedPool(t, runner, res.Report)
	}
	if want := int64(FlinkPartitions(Input{}, *jobopts.Parallelism)); runner == "flink" && res.Report.Pipeline.FlinkPartitions != want {
		t.Errorf("report: %d Flink partitions, want %d", res.Report.Pipeline.FlinkPartitions, want)
	}
	out, got := readRelease(t, p.Output)
	if len(got) != len(f.want) {
		t.Fatalf("%s wrote %d shards, prism %d", runner, len(got), len(f.want))
	}
	for name, b := range f.want {
		if !bytes.Equal(b, got[name]) {
			t.Errorf("%s: %s differs from prism's", runner, name)
		}
	}
	chk, err := verify.Check(f.in, out, verify.Params{K: p.Solver.K, Mode: p.Solver.Mode})
	if err != nil || !chk.Valid {
		t.Fatalf("%s release does not verify: %v %v", runner, err, chk.GetProblems())
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(ctx context.Context, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not listening: %w", addr, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// TestUniversalRunnerMatchesPrism runs the pipeline through the portable
// job API against a separately served job server (prism's, on a free
// loopback port) — the same path --runner=flink takes — and requires the
// identical release.
func TestUniversalRunnerMatchesPrism(t *testing.T) {
	f := newRunnerFixture(t)
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := prism.CreateJobServer(ctx, prism.Options{Port: port}); err != nil {
		t.Fatal(err)
	}
	f.check(t, "universal", fmt.Sprintf("localhost:%d", port))
}

// flinkJobServer returns the java arguments that launch Beam's Flink job
// server, as deploy/flink/fetch-jobserver.sh left it: $SMOOTHANON_FLINK_JOBSERVER
// (a jar, or a java argument file), else the script's default argument file
// ~/.cache/smoothanon/flink-jobserver.args, else a shaded job server jar in
// ~/.m2. It returns nil when there is none.
func flinkJobServer() []string {
	launch := func(path string) []string {
		if strings.HasSuffix(path, ".jar") {
			return []string{"-jar", path}
		}
		return []string{"@" + path}
	}
	if j := os.Getenv("SMOOTHANON_FLINK_JOBSERVER"); j != "" {
		j, _ = filepath.Abs(j) // the job server runs in another directory
		if st, err := os.Stat(j); err == nil && st.Size() > 0 {
			return launch(j)
		}
		return nil
	}
	home, _ := os.UserHomeDir()
	if args := filepath.Join(home, ".cache", "smoothanon", "flink-jobserver.args"); fileNonEmpty(args) {
		return launch(args)
	}
	repo := filepath.Join(home, ".m2", "repository")
	if r := os.Getenv("MAVEN_REPO_LOCAL"); r != "" {
		repo = r
	}
	beamVersion := strings.TrimPrefix(beamSDKVersion(), "v")
	for _, fv := range []string{"2.2", "2.1", "2.0", "1.20", "1.19"} {
		a := "beam-runners-flink-" + fv + "-job-server"
		jar := filepath.Join(repo, "org", "apache", "beam", a, beamVersion, a+"-"+beamVersion+".jar")
		if fileNonEmpty(jar) {
			return launch(jar)
		}
	}
	return nil
}

// requireFlinkJobServer returns flinkJobServer's arguments, or skips the
// test without a job server (fails it when CI is set) and in -short mode.
func requireFlinkJobServer(t *testing.T) []string {
	t.Helper()
	launch := flinkJobServer()
	if launch == nil {
		msg := "Flink job server jar not found: run deploy/flink/fetch-jobserver.sh (needs mvn, JDK 17 and Maven Central) or set SMOOTHANON_FLINK_JOBSERVER"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if testing.Short() {
		t.Skip("Flink integration test skipped in -short mode")
	}
	return launch
}

func fileNonEmpty(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() > 0
}

// beamSDKVersion is the Beam Go SDK version in ../go.mod.
func beamSDKVersion() string {
	b, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "github.com/apache/beam/sdks/v2" {
			return f[1]
		}
	}
	return ""
}

// TestFlinkMatchesPrism starts Beam's Flink job server (embedded local
// Flink cluster) on free loopback ports, runs the pipeline with
// --runner=flink, and requires prism's release byte for byte: once with
// LOOPBACK workers (in this process), once with PROCESS workers (Beam's Go
// boot loader, started by Flink, fetches the staged --worker_binary — the
// smoothanon binary — and starts it with --worker=true, the path Dataflow
// and cluster workers take; deploy/flink/process-boot.sh runs the boot
// loader, as on the cluster). Without the jar it skips, unless CI is set:
// then it fails.
func TestFlinkMatchesPrism(t *testing.T) {
	launch := requireFlinkJobServer(t)
	f := newRunnerFixture(t)
	marker := processMarker(t)
	t.Cleanup(func() { checkNoLeftovers(t, marker, "", "") }) // after the job server stopped
	endpoint := startFlinkJobServer(t, launch, f.dir, marker, "--flink-master=[local]")
	t.Run("loopback", func(t *testing.T) { f.check(t, "flink", endpoint) })
	t.Run("process", func(t *testing.T) {
		bin := t.TempDir()
		boot, worker := filepath.Join(bin, "boot"), filepath.Join(bin, "smoothanon")
		for _, b := range [][]string{
			{"build", "-o", boot, "github.com/apache/beam/sdks/v2/go/container"},
			{"build", "-o", worker, "../cmd/smoothanon"},
		} {
			if out, err := exec.Command("go", b...).CombinedOutput(); err != nil {
				t.Fatalf("go %s: %v\n%s", strings.Join(b, " "), err, out)
			}
		}
		// No boot loader or worker may outlive the job, though the job
		// server lives on, and no copy of the binary may stay in /tmp
		// (internal/workerexit). process-boot.sh, as on the cluster, gives
		// each boot loader a directory of its own: nothing may be staged
		// into the host-wide /tmp/staged.
		start := time.Now()
		t.Cleanup(func() {
			checkNoLeftovers(t, marker, bootOrWorker, worker)
			checkNoSharedStaging(t, worker, start)
		})
		wrapper, err := filepath.Abs("../deploy/flink/process-boot.sh")
		if err != nil {
			t.Fatal(err)
		}
		cfg, wb := *jobopts.EnvironmentConfig, *jobopts.WorkerBinary
		*jobopts.EnvironmentConfig = fmt.Sprintf(`{"command": %q, "env": {"BEAM_GO_BOOT": %q}}`, wrapper, boot)
		*jobopts.WorkerBinary = worker
		defer func() { *jobopts.EnvironmentConfig, *jobopts.WorkerBinary = cfg, wb }()
		f.checkEnv(t, "flink", endpoint, "PROCESS")
	})
}

// startFlinkJobServer starts Beam's Flink job server (java arguments
// launch) on a free loopback port with marker in its environment, stops it
// when t ends, and returns its endpoint. PROCESS workers start in dir.
func startFlinkJobServer(t *testing.T, launch []string, dir, marker string, extra ...string) string {
	t.Helper()
	jobPort := freePort(t)
	logPath := filepath.Join(dir, "flink-jobserver.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	args := []string{
		// Flink on JDK 17 needs these opens (as Flink's own scripts pass).
		"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
		"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
		"--add-opens=java.base/java.io=ALL-UNNAMED", "--add-opens=java.base/java.net=ALL-UNNAMED",
		"--add-opens=java.base/java.util.concurrent=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
		"-Xmx1g"}
	args = append(args, launch...)
	args = append(args, "--job-host=127.0.0.1", fmt.Sprintf("--job-port=%d", jobPort),
		"--artifact-port=0", "--expansion-port=0",
		// Staged binaries go to the test's directory, not to the default
		// /tmp/beam-artifact-staging, which nothing cleans.
		"--artifacts-dir="+filepath.Join(dir, "artifacts"))
	args = append(args, extra...)
	cmd := exec.Command("java", args...)
	// PROCESS workers start in the job server's directory, where Beam's boot
	// loader writes pipeline_options.json: keep that out of the source tree.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), marker)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the job server: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { stopProcessGroup(cmd.Process.Pid, done) })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := waitPort(ctx, fmt.Sprintf("127.0.0.1:%d", jobPort)); err != nil {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("Flink job server did not start: %v\n%s", err, tail(b, 3000))
	}
	t.Logf("Flink job server %s on port %d (%s/%s)", filepath.Base(launch[len(launch)-1]), jobPort, runtime.GOOS, runtime.GOARCH)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("job server log:\n%s", tail(b, 5000))
		}
	})
	return fmt.Sprintf("localhost:%d", jobPort)
}

// stopProcessGroup ends the process group pgid (SIGTERM, then SIGKILL
// after 15 s) and waits for done.
func stopProcessGroup(pgid int, done <-chan struct{}) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
