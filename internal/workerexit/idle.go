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

// controlMethod is the Fn API control stream's gRPC method.
var controlMethod = "/" + fnpb.BeamFnControl_ServiceDesc.ServiceName + "/Control"

// idleWatch tracks the instructions on a worker's control stream: those
// received and not yet answered, and when the stream last carried one.
type idleWatch struct {
	mu          sync.Mutex
	outstanding map[string]bool
	last        time.Time
}

func newIdleWatch(now time.Time) *idleWatch {
	return &idleWatch{outstanding: map[string]bool{}, last: now}
}

func (w *idleWatch) received(id string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outstanding[id] = true
	w.last = now
}

func (w *idleWatch) answered(id string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.outstanding, id)
	w.last = now
}

// idleFor is how long the stream has been idle at now: 0 while an
// instruction is outstanding (a bundle in progress is never idle).
func (w *idleWatch) idleFor(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.outstanding) > 0 {
		return 0
	}
	return now.Sub(w.last)
}

// intercept is a gRPC stream client interceptor that reports the control
// stream's instructions and answers to w.
func (w *idleWatch) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || method != controlMethod {
		return s, err
	}
	return &watchedStream{ClientStream: s, w: w}, nil
}

type watchedStream struct {
	grpc.ClientStream
	w *idleWatch
}

func (s *watchedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if req, ok := m.(*fnpb.InstructionRequest); ok && err == nil {
		s.w.received(req.GetInstructionId(), time.Now())
	}
	return err
}

func (s *watchedStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if resp, ok := m.(*fnpb.InstructionResponse); ok {
		s.w.answered(resp.GetInstructionId(), time.Now())
	}
	return err
}

// idleTimeout parses IdleExitEnv's value; 0 means off.
func idleTimeout(v string) (time.Duration, error) {
	if v == "" || v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 5m", IdleExitEnv, v)
	}
	return d, nil
}

// exitWhenIdle installs the control stream watch in Beam's gRPC dialer and
// calls exit once the stream was idle for timeout (IdleExitEnv).
func exitWhenIdle(exit func()) error {
	timeout, err := idleTimeout(os.Getenv(IdleExitEnv))
	if err != nil || timeout == 0 {
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
	go func() {
		t := time.NewTicker(min(time.Second, timeout/4+time.Millisecond))
		defer t.Stop()
		for now := range t.C {
			if idle := w.idleFor(now); idle >= timeout {
				fmt.Fprintf(os.Stderr, "workerexit: no instruction on the control stream for %v (%s=%v): exiting\n",
					idle.Round(time.Second), IdleExitEnv, timeout)
				exit()
				return
			}
		}
	}()
	return nil
}
