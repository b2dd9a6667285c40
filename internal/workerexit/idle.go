package workerexit

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// IdleExitEnv names the environment variable that turns the idle exit on:
// a Go duration ("5m"). A worker whose control stream has carried no
// instruction for that long, with none outstanding, exits. Unset, empty or
// "0": off. deploy/flink/process-boot.sh sets it for Flink PROCESS workers.
//
// Why: after a failover Beam's Flink runner (2.62.0) may never close an
// environment of the cancelled attempt on a surviving TaskManager — a
// stage's open() that failed, or a close() Flink skips for a cancelled
// task, leaves the reference count of the job's ExecutableStageContext
// above zero, so its DefaultJobBundleFactory and the worker's control
// stream stay open until the TaskManager stops. Only the worker can end
// it. Not for Dataflow: its workers may rightly wait long for work.
const IdleExitEnv = "SMOOTHANON_WORKER_IDLE_EXIT"

// StallExitEnv names the environment variable that turns the stall exit
// on: a Go duration ("30m"). A worker with an instruction outstanding
// whose Fn API streams (control, data and state, either way) carried
// nothing for that long, and whose process used no CPU in that time,
// exits. Unset, empty or "0": off. deploy/flink/process-boot.sh sets it
// for Flink PROCESS workers.
//
// Why: the same failover can leave a bundle of the cancelled attempt
// outstanding — the runner sent ProcessBundle, then neither the rest of
// its input nor a close — and the idle exit never ends a worker with a
// bundle in progress. A bundle that waits for its input from a slow
// upstream stage looks the same from the worker, so the stall time must
// be longer than any stage's wait for its input; a worker that computes
// uses CPU and never stalls.
const StallExitEnv = "SMOOTHANON_WORKER_STALL_EXIT"

// busyShare is the share of a watch tick's wall time the process must use
// on CPU for the tick to count as work: well above the Go runtime's own
// background work in a waiting process, far below one busy goroutine.
const busyShare = 100 // 1/100 of the tick

// Fn API stream methods the watch reads: instructions on the control
// stream; any message on control, data or state counts as traffic.
var (
	controlMethod = "/" + fnpb.BeamFnControl_ServiceDesc.ServiceName + "/Control"
	dataMethod    = "/" + fnpb.BeamFnData_ServiceDesc.ServiceName + "/Data"
	stateMethod   = "/" + fnpb.BeamFnState_ServiceDesc.ServiceName + "/State"
)

// idleWatch tracks a worker's Fn API streams: the instructions received
// and not yet answered, when the control stream last carried one, when
// any stream last carried a message, and when the process last used CPU.
type idleWatch struct {
	mu          sync.Mutex
	outstanding map[string]bool
	last        time.Time // last instruction or answer
	traffic     time.Time // last message on any watched stream
	busy        time.Time // last watch tick that counted as work
}

func newIdleWatch(now time.Time) *idleWatch {
	return &idleWatch{outstanding: map[string]bool{}, last: now, traffic: now, busy: now}
}

func (w *idleWatch) received(id string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outstanding[id] = true
	w.last, w.traffic = now, now
}

func (w *idleWatch) answered(id string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.outstanding, id)
	w.last, w.traffic = now, now
}

// message records a message on a data or state stream.
func (w *idleWatch) message(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.traffic = now
}

// worked records a watch tick at which the process used CPU.
func (w *idleWatch) worked(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy = now
}

// idleFor is how long the control stream has been idle at now: 0 while an
// instruction is outstanding (a bundle in progress is never idle).
func (w *idleWatch) idleFor(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.outstanding) > 0 {
		return 0
	}
	return now.Sub(w.last)
}

// stalledFor is how long, at now, an outstanding instruction has seen no
// message on any stream and no CPU use: 0 with none outstanding.
func (w *idleWatch) stalledFor(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.outstanding) == 0 {
		return 0
	}
	return now.Sub(later(w.traffic, w.busy))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// verdict says why the worker should exit at now, or "" to go on: idle
// and stall are the timeouts (0: off).
func (w *idleWatch) verdict(now time.Time, idle, stall time.Duration) string {
	if d := w.idleFor(now); idle > 0 && d >= idle {
		return fmt.Sprintf("no instruction on the control stream for %v (%s=%v)", d.Round(time.Second), IdleExitEnv, idle)
	}
	if d := w.stalledFor(now); stall > 0 && d >= stall {
		return fmt.Sprintf("an instruction outstanding with no Fn API message and no CPU use for %v (%s=%v)",
			d.Round(time.Second), StallExitEnv, stall)
	}
	return ""
}

// intercept is a gRPC stream client interceptor that reports the control
// stream's instructions and answers, and the data and state streams'
// messages, to w.
func (w *idleWatch) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return s, err
	}
	switch method {
	case controlMethod, dataMethod, stateMethod:
		return &watchedStream{ClientStream: s, w: w}, nil
	}
	return s, nil
}

type watchedStream struct {
	grpc.ClientStream
	w *idleWatch
}

func (s *watchedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		return err
	}
	if req, ok := m.(*fnpb.InstructionRequest); ok {
		s.w.received(req.GetInstructionId(), time.Now())
	} else {
		s.w.message(time.Now())
	}
	return nil
}

func (s *watchedStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if resp, ok := m.(*fnpb.InstructionResponse); ok {
		s.w.answered(resp.GetInstructionId(), time.Now())
	} else if err == nil {
		s.w.message(time.Now())
	}
	return err
}

// timeout parses the duration in env's value v; 0 means off.
func timeout(env, v string) (time.Duration, error) {
	if v == "" || v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 5m", env, v)
	}
	return d, nil
}

// exitWhenIdle installs the stream watch in Beam's gRPC dialer and calls
// exit once the control stream was idle (IdleExitEnv) or an instruction
// stalled (StallExitEnv) for its timeout.
func exitWhenIdle(exit func()) error {
	idle, err := timeout(IdleExitEnv, os.Getenv(IdleExitEnv))
	if err != nil {
		return err
	}
	stall, err := timeout(StallExitEnv, os.Getenv(StallExitEnv))
	if err != nil || idle == 0 && stall == 0 {
		return err
	}
	w := newIdleWatch(time.Now())
	grpcx.Dial = func(ctx context.Context, endpoint string, dialTimeout time.Duration) (*grpc.ClientConn, error) {
		ctx, cancel := context.WithTimeout(ctx, dialTimeout)
		defer cancel()
		// grpcx.DefaultDial's options (a blocking dial with a timeout) plus
		// the watch.
		//lint:ignore SA1019 the harness relies on a blocking dial, as grpcx.DefaultDial does
		block := grpc.WithBlock()
		//lint:ignore SA1019 as grpcx.DefaultDial does
		cc, err := grpc.DialContext(ctx, endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()),
			block, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)),
			grpc.WithChainStreamInterceptor(w.intercept))
		if err != nil {
			return nil, fmt.Errorf("failed to dial server at %v: %w", endpoint, err)
		}
		return cc, nil
	}
	shortest := idle
	if shortest == 0 || stall > 0 && stall < shortest {
		shortest = stall
	}
	tick := min(time.Second, shortest/4+time.Millisecond)
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		used, _ := cpuTime()
		for now := range t.C {
			u, ok := cpuTime()
			if !ok || u-used >= tick/busyShare {
				w.worked(now)
			}
			used = u
			if why := w.verdict(now, idle, stall); why != "" {
				fmt.Fprintf(os.Stderr, "workerexit: %s: exiting\n", why)
				exit()
				return
			}
		}
	}()
	return nil
}
