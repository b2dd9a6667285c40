package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/smoothanon/smoothanon/internal/workerexit"
)

// workerParentEnv makes this test binary act as the parent of a worker
// (runWorkerParent) instead of running tests; its value is the Fn API
// endpoint the worker connects to.
const workerParentEnv = "SMOOTHANON_TEST_WORKER_PARENT"

// fakeFnAPI is a runner's Fn API control and logging service for one
// worker: Control tells connected about the stream, holds it open until
// release is closed, then ends it with result (nil: a clean end of stream).
// With bundle set, Control first sends a ProcessBundle whose descriptor
// the worker then asks for and never gets until release: a bundle that
// stays outstanding, as one of a cancelled attempt does.
type fakeFnAPI struct {
	fnpb.UnimplementedBeamFnControlServer
	fnpb.UnimplementedBeamFnLoggingServer
	connected chan struct{}
	release   chan struct{}
	result    error
	bundle    bool
}

func (f *fakeFnAPI) Control(s fnpb.BeamFnControl_ControlServer) error {
	select {
	case f.connected <- struct{}{}:
	default:
	}
	if f.bundle {
		err := s.Send(&fnpb.InstructionRequest{InstructionId: "stalled-1", Request: &fnpb.InstructionRequest_ProcessBundle{
			ProcessBundle: &fnpb.ProcessBundleRequest{ProcessBundleDescriptorId: "never-sent"}}})
		if err != nil {
			return err
		}
	}
	select {
	case <-f.release:
	case <-s.Context().Done():
	}
	return f.result
}

func (f *fakeFnAPI) GetProcessBundleDescriptor(ctx context.Context, _ *fnpb.GetProcessBundleDescriptorRequest) (*fnpb.ProcessBundleDescriptor, error) {
	select {
	case <-f.release:
	case <-ctx.Done():
	}
	return nil, status.Error(codes.Unavailable, "the fake runner never sends this descriptor")
}

func (f *fakeFnAPI) Logging(s fnpb.BeamFnLogging_LoggingServer) error {
	for {
		if _, err := s.Recv(); err != nil {
			return nil
		}
	}
}

// serveFnAPI serves f on a free loopback port and returns its address.
func serveFnAPI(t *testing.T, f *fakeFnAPI) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	fnpb.RegisterBeamFnControlServer(srv, f)
	fnpb.RegisterBeamFnLoggingServer(srv, f)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return l.Addr().String()
}

func newFakeFnAPI(result error) *fakeFnAPI {
	return &fakeFnAPI{connected: make(chan struct{}, 1), release: make(chan struct{}), result: result}
}

// workerArgs are the flags Beam's boot loader passes to a Go worker.
func workerArgs(endpoint string) []string {
	return []string{"--worker=true", "--id=exit-test", "--control_endpoint=" + endpoint, "--logging_endpoint=" + endpoint}
}

// runWorkerParent starts this binary as a worker, prints its PID and
// sleeps until it is killed: the role of Beam's boot loader.
func runWorkerParent(endpoint string) int {
	cmd := exec.Command(os.Args[0], workerArgs(endpoint)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(cmd.Process.Pid)
	time.Sleep(time.Hour)
	return 0
}

// processGone reports whether pid has exited (no longer exists, or is a
// zombie nobody reaped).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || strings.HasPrefix(s[i:], ") Z")
}

func waitConnected(t *testing.T, f *fakeFnAPI, logPath string) {
	t.Helper()
	select {
	case <-f.connected:
	case <-time.After(90 * time.Second):
		b, _ := os.ReadFile(logPath)
		t.Fatalf("worker did not open its control stream\n%s", tail(b, 3000))
	}
}

// TestWorkerExitsWithParent kills the worker's parent while the worker's
// control stream is still open (it is served by this test, not by the
// parent): the worker must exit within seconds instead of living on with
// parent PID 1.
func TestWorkerExitsWithParent(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	f := newFakeFnAPI(nil)
	endpoint := serveFnAPI(t, f)
	logPath := filepath.Join(t.TempDir(), "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), workerParentEnv+"="+endpoint)
	parent.Stderr = logFile
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		parent.Process.Kill()
		parent.Wait()
		t.Fatalf("parent printed no worker PID: %q %v %v", line, err, perr)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	waitConnected(t, f, logPath)

	parent.Process.Kill()
	parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("worker %d still runs 10 s after its parent was killed\n%s", pid, tail(b, 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWorkerExitsWhenControlStreamEnds ends the control stream the way a
// runner does when the job is over: the worker must exit 0 (Beam's harness
// alone prints "Worker exited successfully!" and sleeps forever).
func TestWorkerExitsWhenControlStreamEnds(t *testing.T) {
	code, log := runWorkerUntilStreamEnds(t, nil)
	if code != 0 || !strings.Contains(log, "Worker exited successfully!") {
		t.Fatalf("exit code %d, want 0 after the harness's done line\n%s", code, tail([]byte(log), 3000))
	}
}

// TestWorkerFailureExitsNonZero ends the control stream with an error: the
// worker must exit 1 and its stderr must still carry the harness's reason.
func TestWorkerFailureExitsNonZero(t *testing.T) {
	code, log := runWorkerUntilStreamEnds(t, status.Error(codes.Unavailable, "runner went away"))
	if code != 1 || !strings.Contains(log, "Worker failed") || !strings.Contains(log, "runner went away") {
		t.Fatalf("exit code %d, want 1 with the harness's failure message\n%s", code, tail([]byte(log), 3000))
	}
}

// runWorkerUntilStreamEnds starts this binary as a worker, ends its
// control stream with result once it connected, and returns the worker's
// exit code and stderr.
func runWorkerUntilStreamEnds(t *testing.T, result error) (int, string) {
	t.Helper()
	f := newFakeFnAPI(result)
	endpoint := serveFnAPI(t, f)
	logPath := filepath.Join(t.TempDir(), "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], workerArgs(endpoint)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitConnected(t, f, logPath)
	close(f.release)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-exited
		b, _ := os.ReadFile(logPath)
		t.Fatalf("worker still runs 15 s after its control stream ended\n%s", tail(b, 3000))
	}
	b, _ := os.ReadFile(logPath)
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return 0, string(b)
	case errors.As(werr, &ee):
		return ee.ExitCode(), string(b)
	}
	t.Fatalf("waiting for the worker: %v", werr)
	return -1, ""
}

// TestWorkerExitsWhenIdle holds the worker's control stream open without
// sending an instruction, as the runner does with an environment it never
// closes (a failover on Flink): with workerexit.IdleExitEnv set the worker
// must exit 0 soon after the idle time.
func TestWorkerExitsWhenIdle(t *testing.T) {
	f := newFakeFnAPI(nil)
	endpoint := serveFnAPI(t, f)
	logPath := filepath.Join(t.TempDir(), "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(os.Args[0], workerArgs(endpoint)...)
	cmd.Env = append(os.Environ(), workerexit.IdleExitEnv+"=3s")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitConnected(t, f, logPath)
	connected := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		b, _ := os.ReadFile(logPath)
		if err != nil || !strings.Contains(string(b), "no instruction on the control stream") {
			t.Fatalf("worker exit %v, want 0 after its idle message\n%s", err, tail(b, 3000))
		}
		if d := time.Since(connected); d < 2*time.Second {
			t.Errorf("worker exited %v after connecting, before its idle time (3 s)", d)
		}
	case <-time.After(30 * time.Second):
		b, _ := os.ReadFile(logPath)
		t.Fatalf("worker still runs 30 s after connecting to an idle control stream\n%s", tail(b, 3000))
	}
	close(f.release)
}

// TestWorkerExitsWhenStalled sends the worker a bundle that then never
// gets what it waits for (its descriptor), as the runner may leave a
// bundle of a cancelled attempt: the idle exit alone must not end a
// worker with a bundle outstanding, and with workerexit.StallExitEnv set
// the worker must exit 0 soon after the stall time.
func TestWorkerExitsWhenStalled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stall string // StallExitEnv; "" leaves it unset
		exits bool
	}{
		{"idle exit only", "", false},
		{"stall exit", "4s", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFnAPI(nil)
			f.bundle = true
			endpoint := serveFnAPI(t, f)
			logPath := filepath.Join(t.TempDir(), "worker.log")
			logFile, err := os.Create(logPath)
			if err != nil {
				t.Fatal(err)
			}
			defer logFile.Close()
			cmd := exec.Command(os.Args[0], workerArgs(endpoint)...)
			cmd.Env = append(os.Environ(), workerexit.IdleExitEnv+"=2s")
			if tc.stall != "" {
				cmd.Env = append(cmd.Env, workerexit.StallExitEnv+"="+tc.stall)
			}
			cmd.Stdout, cmd.Stderr = logFile, logFile
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			defer close(f.release)
			waitConnected(t, f, logPath)
			connected := time.Now()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				b, _ := os.ReadFile(logPath)
				if !tc.exits {
					t.Fatalf("worker exited (%v) with a bundle outstanding and no stall exit\n%s", err, tail(b, 3000))
				}
				if err != nil || !strings.Contains(string(b), "an instruction outstanding") {
					t.Fatalf("worker exit %v, want 0 after its stall message\n%s", err, tail(b, 3000))
				}
				if d := time.Since(connected); d < 3*time.Second {
					t.Errorf("worker exited %v after connecting, before its stall time (4 s)", d)
				}
			case <-time.After(map[bool]time.Duration{false: 8 * time.Second, true: 30 * time.Second}[tc.exits]):
				if tc.exits {
					b, _ := os.ReadFile(logPath)
					t.Fatalf("worker still runs 30 s after its bundle stalled\n%s", tail(b, 3000))
				}
			}
		})
	}
}
