package pipeline

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/metricsx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/xlangx"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/extworker"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal/runnerlib"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// Flink partitions. Beam's Flink batch runner hands each partition of a
// stage to the SDK harness as one bundle and drains the bundle's output
// only after the harness reports the bundle finished, so the runner holds
// every running bundle's whole output, and the Go harness buffers up to 20
// input messages of every running bundle (see
// docs/decisions/022-flink-partitions-from-input.md). What a process
// holds therefore grows with the rows of a partition times the partitions
// running at once. The job sizes its partitions from the input's footers so
// that a partition holds about as much as at 10^7 rows in 16 partitions, the
// size measured safe, and asks for blocking exchanges, so that a cluster
// with fewer task slots than partitions runs them in waves instead of
// holding them all at once.
const (
	// MinFlinkPartitions is the partitions of an input of 10^7 lists of
	// about 10 features, the size measured safe; inputs that need more
	// get more.
	MinFlinkPartitions = 16
	// flinkPartitionRows and flinkPartitionValues bound a partition's
	// rows and feature values.
	flinkPartitionRows   = 625_000
	flinkPartitionValues = 6_250_000
)

// FlinkPartitions is the number of partitions a Flink job over in runs,
// or 0 to leave it to the runner (its parallelism.default; on [local], the
// machine's cores). floor is the user's --parallelism (<= 0: none). An
// input that needs more than one partition of at most 625,000 rows and
// 6.25 million feature values gets as many as it needs, or the floor if
// that is more; so does one with a floor. Only an input that fits one
// partition is left to the runner: a runner's default (Flink's is 1) is
// no bound on what a partition holds, and a partition of millions of rows
// stalls the job for good (docs/decisions/025-flink-partitions-past-one.md).
func FlinkPartitions(in Input, floor int) int {
	need := max(int(ceilDiv(in.Rows, flinkPartitionRows)), int(ceilDiv(in.FeatureValues, flinkPartitionValues)))
	if floor <= 0 && need <= 1 {
		return 0
	}
	return max(floor, need)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// flinkOptions are the job options the launcher adds to a Flink job:
// Beam's Go launcher sends only a fixed few (runnerlib.Prepare, the
// parallelism among them), and executionModeForBatch is not among them.
// BATCH_FORCED makes every exchange blocking, so each partition of a stage
// is scheduled on its own and a job may have more partitions than the
// cluster has task slots.
var flinkOptions = map[string]*structpb.Value{
	"beam:option:execution_mode_for_batch:v1": structpb.NewStringValue("BATCH_FORCED"),
}

// optionsClient adds options to the job a JobServiceClient prepares.
type optionsClient struct {
	jobpb.JobServiceClient
	options map[string]*structpb.Value
}

func (c optionsClient) Prepare(ctx context.Context, req *jobpb.PrepareJobRequest, opts ...grpc.CallOption) (*jobpb.PrepareJobResponse, error) {
	if req.PipelineOptions == nil {
		req.PipelineOptions = &structpb.Struct{}
	}
	if req.PipelineOptions.Fields == nil {
		req.PipelineOptions.Fields = map[string]*structpb.Value{}
	}
	for k, v := range c.options {
		req.PipelineOptions.Fields[k] = v
	}
	return c.JobServiceClient.Prepare(ctx, req, opts...)
}

// runFlink runs p on the Flink job service at --endpoint as Beam's
// universal runner does (universal.Execute, runnerlib.Execute of the Beam
// version in go.mod), with the job options of flinkOptions.
func runFlink(ctx context.Context, p *beam.Pipeline, partitions int) (beam.PipelineResult, error) {
	endpoint, err := jobopts.GetEndpoint()
	if err != nil {
		return nil, err
	}
	edges, _, err := p.Build()
	if err != nil {
		return nil, err
	}
	getEnvCfg := jobopts.GetEnvironmentConfig
	bin := *jobopts.WorkerBinary
	if jobopts.IsLoopback() {
		srv, err := extworker.StartLoopback(ctx, 0)
		if err != nil {
			return nil, err
		}
		defer srv.Stop(ctx)
		getEnvCfg = srv.EnvironmentConfig
		// The binary is unused in loopback mode; Beam stages a placeholder.
		f, err := os.CreateTemp("", "beamloopbackworker-*")
		if err != nil {
			return nil, err
		}
		f.Close()
		defer os.Remove(f.Name())
		bin = f.Name()
	} else if bin == "" {
		self, ok := runnerlib.IsWorkerCompatibleBinary()
		if !ok {
			return nil, fmt.Errorf("flink: this binary cannot serve as the Go worker (not linux/amd64); build one and pass --worker_binary")
		}
		bin = self
	}
	xlangx.ResolveArtifacts(ctx, edges, nil)
	env, err := graphx.CreateEnvironment(ctx, jobopts.GetEnvironmentUrn(ctx), getEnvCfg)
	if err != nil {
		return nil, fmt.Errorf("generating model pipeline: %w", err)
	}
	pipe, err := graphx.Marshal(edges, &graphx.Options{Environment: env, PipelineResourceHints: jobopts.GetPipelineResourceHints()})
	if err != nil {
		return nil, fmt.Errorf("generating model pipeline: %w", err)
	}
	if err := runnerlib.UpdateGoEnvironmentWorker(bin, pipe); err != nil {
		return nil, err
	}
	cc, err := grpcx.Dial(ctx, endpoint, 2*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("connecting to job service: %w", err)
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	opt := &runnerlib.JobOptions{
		Name:         jobopts.GetJobName(),
		Experiments:  jobopts.GetExperiments(),
		RetainDocker: *jobopts.RetainDockerContainers,
		Parallelism:  -1,
		Loopback:     jobopts.IsLoopback(),
	}
	var prep jobpb.JobServiceClient = client
	if partitions > 0 {
		// Sized partitions may outnumber the slots: run them in waves.
		opt.Parallelism, prep = partitions, optionsClient{client, flinkOptions}
	}
	prepID, artifacts, token, err := runnerlib.Prepare(ctx, prep, pipe, opt)
	if err != nil {
		return nil, err
	}
	retrieval, err := runnerlib.Stage(ctx, prepID, artifacts, bin, token)
	if err != nil {
		return nil, err
	}
	jobID, err := runnerlib.Submit(ctx, client, prepID, retrieval)
	if err != nil {
		return nil, err
	}
	waitErr := waitJob(ctx, client, jobID)
	res := &flinkResult{jobID: jobID}
	if m, err := client.GetJobMetrics(ctx, &jobpb.GetJobMetricsRequest{JobId: jobID}); err == nil {
		st := m.GetMetrics()
		res.metrics = metricsx.FromMonitoringInfos(pipe, st.GetAttempted(), st.GetCommitted())
	}
	return res, waitErr
}

// waitJob waits for the job to end, as Beam's runner does, and cancels
// it on the job service when ctx ends first (a signal, a lost lease), so
// that a cluster's workers stop writing into a staging directory the
// launcher is about to remove; Beam's runner leaves the job running.
func waitJob(ctx context.Context, client jobpb.JobServiceClient, jobID string) error {
	cancelled := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(cancelled)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client.Cancel(cctx, &jobpb.CancelJobRequest{JobId: jobID})
	})
	defer func() {
		if !stop() {
			<-cancelled // the connection closes after the request
		}
	}()
	return runnerlib.WaitForCompletion(ctx, client, jobID)
}

// flinkResult is a finished job's id and metrics.
type flinkResult struct {
	jobID   string
	metrics *metrics.Results
}

// Metrics panics, as Beam's universal result does, when the job service
// returned none; metricsOf recovers.
func (r *flinkResult) Metrics() metrics.Results { return *r.metrics }
func (r *flinkResult) JobID() string            { return r.jobID }
