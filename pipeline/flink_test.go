package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestFlinkPartitions(t *testing.T) {
	for _, c := range []struct {
		name        string
		rows, vals  int64
		floor, want int
	}{
		{"empty", 0, 0, -1, 0},
		{"one partition's worth: the runner's default", 625_000, 6_250_000, -1, 0},
		{"one row more: sized", 625_001, 0, -1, 2},
		{"1e6 lists of ~10", 1_000_000, 10_000_000, -1, 2},
		{"the user's parallelism is kept", 1_000_000, 10_000_000, 40, 40},
		{"a floor below the input's need is raised", 1_000_000, 10_000_000, 1, 2},
		{"a floor on a small input", 1000, 10_000, 4, 4},
		// Left to the runner, 1e7 lists ran in one partition on a
		// MiniCluster (Flink's default parallelism, 1) and stalled.
		{"1e7 lists of ~10", 10_000_000, 100_000_000, -1, MinFlinkPartitions},
		{"rows decide", 100_000_000, 100_000_000, -1, 160},
		{"feature values decide", 1_000_000, 1_000_000_000, -1, 160},
		{"one row over the minimum's reach", 10_000_001, 0, -1, 17},
		{"1e9 lists", 1_000_000_000, 10_000_000_000, 8, 1600},
		{"the user's floor above the input's", 100_000_000, 0, 400, 400},
	} {
		if got := FlinkPartitions(Input{Rows: c.rows, FeatureValues: c.vals}, c.floor); got != c.want {
			t.Errorf("%s: FlinkPartitions(%d rows, %d values, floor %d) = %d, want %d", c.name, c.rows, c.vals, c.floor, got, c.want)
		}
	}
}

// prepareRecorder is a job service client that records the request of
// Prepare and fails it.
type prepareRecorder struct {
	jobpb.JobServiceClient
	got *jobpb.PrepareJobRequest
}

func (r *prepareRecorder) Prepare(_ context.Context, req *jobpb.PrepareJobRequest, _ ...grpc.CallOption) (*jobpb.PrepareJobResponse, error) {
	r.got = req
	return nil, os.ErrClosed
}

func TestOptionsClientAddsOptions(t *testing.T) {
	for _, opts := range []*structpb.Struct{nil, {}, {Fields: map[string]*structpb.Value{"beam:option:parallelism:v1": structpb.NewNumberValue(40)}}} {
		own := opts.GetFields()["beam:option:parallelism:v1"] != nil
		rec := &prepareRecorder{}
		c := optionsClient{rec, flinkOptions}
		c.Prepare(context.Background(), &jobpb.PrepareJobRequest{PipelineOptions: opts})
		f := rec.got.GetPipelineOptions().GetFields()
		if got := f["beam:option:execution_mode_for_batch:v1"].GetStringValue(); got != "BATCH_FORCED" {
			t.Errorf("options %v: execution mode %q, want BATCH_FORCED", opts, got)
		}
		if own && f["beam:option:parallelism:v1"].GetNumberValue() != 40 {
			t.Errorf("options %v: the launcher's own options were not kept: %v", opts, f)
		}
	}
}

// miniClusterLaunch returns the java arguments that start
// deploy/flink/MiniClusterJobServer.java on the classpath of launch (a
// "-jar" jar or a java argument file holding "-cp").
func miniClusterLaunch(t *testing.T, launch []string) []string {
	t.Helper()
	var cp string
	if launch[0] == "-jar" {
		cp = launch[1]
	} else {
		b, err := os.ReadFile(strings.TrimPrefix(launch[0], "@"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "-cp "); ok {
				cp = strings.TrimSpace(v)
			}
		}
		if cp == "" {
			t.Fatalf("no -cp line in %s", launch[0])
		}
	}
	src, err := filepath.Abs("../deploy/flink/MiniClusterJobServer.java")
	if err != nil {
		t.Fatal(err)
	}
	return []string{"-cp", cp, src}
}

// TestFlinkPartitionsInWaves runs the fixture on a Flink cluster with two
// task slots (a MiniCluster in the job server's JVM, as make bench-flink
// runs it): the job's 16 partitions (FlinkPartitions) run in waves only if
// the launcher asked for blocking exchanges; otherwise the scheduler finds
// no slots for a stage's pipelined partitions and the job fails once the
// slot request times out. The release must be prism's, byte for byte.
func TestFlinkPartitionsInWaves(t *testing.T) {
	launch := requireFlinkJobServer(t)
	f := newRunnerFixture(t)
	f.params.PoolShare = 0 // fewer stages: the waves, not the pools, are under test
	f.want = func() map[string][]byte {
		p := f.params
		p.Output = filepath.Join(f.dir, "prism-nopool")
		runOK(t, p)
		_, want := readRelease(t, p.Output)
		return want
	}()
	conf := t.TempDir()
	if err := os.WriteFile(filepath.Join(conf, "flink-conf.yaml"), []byte("taskmanager.numberOfTaskSlots: 2\nslot.request.timeout: 20000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLINK_CONF_DIR", conf)
	par := *jobopts.Parallelism
	*jobopts.Parallelism = MinFlinkPartitions // as --parallelism 16: sized partitions, more than the slots
	defer func() { *jobopts.Parallelism = par }()
	marker := processMarker(t)
	t.Cleanup(func() { checkNoLeftovers(t, marker, "", "") })
	endpoint := startFlinkJobServer(t, miniClusterLaunch(t, launch), f.dir, marker)
	f.check(t, "flink", endpoint)
}

// waitClient is a job service whose message stream ends only with its
// context, and which records the jobs it was asked to cancel.
type waitClient struct {
	jobpb.JobServiceClient
	cancelled chan string
}

type blockedStream struct {
	grpc.ClientStream
	ctx context.Context
}

func (s blockedStream) Recv() (*jobpb.JobMessagesResponse, error) {
	<-s.ctx.Done()
	return nil, s.ctx.Err()
}

func (c waitClient) GetMessageStream(ctx context.Context, _ *jobpb.JobMessagesRequest, _ ...grpc.CallOption) (jobpb.JobService_GetMessageStreamClient, error) {
	return blockedStream{ctx: ctx}, nil
}

func (c waitClient) Cancel(_ context.Context, req *jobpb.CancelJobRequest, _ ...grpc.CallOption) (*jobpb.CancelJobResponse, error) {
	c.cancelled <- req.JobId
	return &jobpb.CancelJobResponse{}, nil
}

func TestWaitJobCancelsOnContextEnd(t *testing.T) {
	c := waitClient{cancelled: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- waitJob(ctx, c, "job-1") }()
	select {
	case <-done:
		t.Fatal("waitJob returned before its context ended")
	case <-c.cancelled:
		t.Fatal("the job was cancelled before its context ended")
	default:
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("waitJob: nil error after its context ended")
	}
	select {
	case id := <-c.cancelled:
		if id != "job-1" {
			t.Errorf("cancelled %q, want job-1", id)
		}
	default:
		t.Fatal("waitJob returned without cancelling the job")
	}
}
