package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// EndpointError is a job endpoint that did not answer in time: the run
// fails before submitting anything (exit code 3).
type EndpointError struct {
	Endpoint string
	Timeout  time.Duration
	Err      error
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("job endpoint %s did not answer within %v (%v)", e.Endpoint, e.Timeout, e.Err)
}
func (e *EndpointError) Unwrap() error { return e.Err }

// probeEndpoint asks the job service of a portable runner (flink,
// universal) for its jobs, and fails with an *EndpointError when it does
// not answer within p.ConnectTimeout: Beam's own submission waits without
// bound on an endpoint that is down or never answers. An answer of any
// kind, an error status included, proves the endpoint alive.
func probeEndpoint(ctx context.Context, p Params) error {
	if p.Runner != "flink" && p.Runner != "universal" {
		return nil
	}
	ep := p.Endpoint
	if ep == "" {
		ep = *jobopts.Endpoint
	}
	if ep == "" {
		return nil // CheckRunner refuses this
	}
	ctx, cancel := context.WithTimeout(ctx, p.ConnectTimeout)
	defer cancel()
	conn, err := grpc.NewClient(strings.TrimPrefix(ep, "dns:///"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return &EndpointError{Endpoint: ep, Timeout: p.ConnectTimeout, Err: err}
	}
	defer conn.Close()
	_, err = jobpb.NewJobServiceClient(conn).GetJobs(ctx, &jobpb.GetJobsRequest{}, grpc.WaitForReady(true))
	switch status.Code(err) {
	case codes.OK, codes.Unimplemented, codes.PermissionDenied, codes.Unauthenticated, codes.InvalidArgument, codes.Internal:
		return nil
	}
	return &EndpointError{Endpoint: ep, Timeout: p.ConnectTimeout, Err: lastCause(err)}
}

// lastCause is the root of a gRPC error's message, one line.
func lastCause(err error) error {
	if s, ok := status.FromError(err); ok {
		return fmt.Errorf("%s", strings.Join(strings.Fields(s.Message()), " "))
	}
	return err
}
