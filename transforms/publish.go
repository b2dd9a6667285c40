package transforms

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/verify"
)

// Staging layout: Publish expects Write to have written the shards to
// StagingRelease(staging) and writes the report to StagingReport(staging).
const (
	stagingReleaseDir = "release"
	stagingReportFile = "report.json"
)

// StagingRelease is the directory Write must fill for Publish.
func StagingRelease(staging string) string { return storage.Join(staging, stagingReleaseDir) }

// StagingReport is where Publish writes the RunReport (protojson).
func StagingReport(staging string) string { return storage.Join(staging, stagingReportFile) }

// PublishParams configure Publish.
type PublishParams struct {
	// Staging is the run's staging directory (local or a URI), on the same
	// store as Output. Required.
	Staging string
	// Output is the release directory. Required.
	Output string
	// RunID names the run in the release's manifest; a publish into an
	// output holding this run's release is a no-op. Required.
	RunID string
	// Overwrite allows replacing another run's release or a non-empty
	// Output. Optional; default false.
	Overwrite bool
	// K and Mode are what the release must satisfy. Required.
	K    int
	Mode matrix.Mode
	// ChunkSize and InputFiles are reported in PipelineInfo. Optional.
	ChunkSize, InputFiles int64
	// PoolShare is reported in PipelineInfo.Pool when > 0. Optional.
	PoolShare float64
	// Metadata is the Parquet key/value metadata of the empty shards
	// Publish adds (as WriteParams.Metadata). Optional; default none.
	Metadata map[string]string
}

func checkPublishParams(p PublishParams) error {
	switch {
	case p.Staging == "":
		return errors.New("publish: no staging directory")
	case p.Output == "":
		return errors.New("publish: no output directory")
	case p.RunID == "":
		return errors.New("publish: no run id")
	case storage.Clean(p.Staging) == storage.Clean(p.Output):
		return fmt.Errorf("publish: staging and output are both %s", p.Output)
	}
	return verify.CheckParams(verify.Params{K: p.K, Mode: p.Mode})
}

func init() {
	register.DoFn4x1[context.Context, []byte, Stats, func(string), error](&publishFn{})
	register.Emitter1[string]()
}

// ErrVerification marks a job that failed because its release did not
// verify.
var ErrVerification = errors.New("release failed verification")

// Publish judges the single Stats element of stats (from CombineStats):
// it writes the RunReport to StagingReport, and only when the release is
// valid — every class ≥ k, the mode's rule held, every input row released
// exactly once — publishes the staged shards to Output with
// release.Publish (a rename locally, a server-side copy on an object
// store, the _SUCCESS manifest last). An invalid release fails the job and
// nothing is published. It returns a PCollection<string> holding Output.
func Publish(s beam.Scope, stats beam.PCollection, params PublishParams) beam.PCollection {
	s = s.Scope("Publish")
	if err := checkPublishParams(params); err != nil {
		panic(err)
	}
	return beam.ParDo(s, &publishFn{Staging: params.Staging, Output: params.Output, RunID: params.RunID, Overwrite: params.Overwrite,
		K: params.K, Mode: int(params.Mode), ChunkSize: params.ChunkSize, InputFiles: params.InputFiles, PoolShare: params.PoolShare,
		Metadata: params.Metadata},
		beam.Impulse(s), beam.SideInput{Input: stats})
}

type publishFn struct {
	Staging    string            `json:"staging"`
	Output     string            `json:"output"`
	RunID      string            `json:"run_id"`
	Overwrite  bool              `json:"overwrite"`
	K          int               `json:"k"`
	Mode       int               `json:"mode"`
	ChunkSize  int64             `json:"chunk_size"`
	InputFiles int64             `json:"input_files"`
	PoolShare  float64           `json:"pool_share"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

func (fn *publishFn) ProcessElement(ctx context.Context, _ []byte, st Stats, emit func(string)) error {
	rep := BuildReport(st, fn.K, matrix.Mode(fn.Mode))
	rep.Pipeline.ChunkSize = fn.ChunkSize
	rep.Pipeline.InputFiles = fn.InputFiles
	if fn.PoolShare > 0 {
		if rep.Pipeline.Pool == nil {
			rep.Pipeline.Pool = &smoothanonpb.PoolInfo{}
		}
		rep.Pipeline.Pool.Share = fn.PoolShare
	}
	sum, err := release.WriteReport(ctx, StagingReport(fn.Staging), rep)
	if err != nil {
		return err
	}
	if !rep.Valid {
		return fmt.Errorf("%w: %s", ErrVerification, strings.Join(rep.Problems, "; "))
	}
	// A retry of a bundle that already published finds the release in
	// place (and, on a local disk, its staged directory gone).
	if err := release.CheckOutput(ctx, fn.Output, fn.RunID, fn.Overwrite); errors.Is(err, release.ErrPublished) {
		log.Infof(ctx, "%s already holds the release of run %s", fn.Output, fn.RunID)
		emit(fn.Output)
		return nil
	}
	staged := StagingRelease(fn.Staging)
	if err := writeEmptyShards(staged, st.Shards, st.ShardCount, fn.Metadata); err != nil {
		return err
	}
	m, already, err := release.Publish(ctx, release.PublishParams{Staged: staged, Output: fn.Output, RunID: fn.RunID,
		Overwrite: fn.Overwrite, ReportSHA256: sum})
	if err != nil {
		return err
	}
	if already {
		log.Infof(ctx, "%s already holds the release of run %s", fn.Output, fn.RunID)
	} else {
		log.Infof(ctx, "published %s: run %s, %d shards, %d rows", fn.Output, m.RunID, len(m.Shards), m.TotalRows)
	}
	emit(fn.Output)
	return nil
}

// BuildReport turns the job's Stats into a RunReport with its verdict.
func BuildReport(st Stats, k int, mode matrix.Mode) *smoothanonpb.RunReport {
	rep := &smoothanonpb.RunReport{
		Mode:               mode.String(),
		K:                  int32(k),
		Rows:               st.InputRows,
		EntriesIn:          st.EntriesIn,
		EntriesOut:         st.EntriesOut,
		EntriesKept:        st.Kept,
		Suppressed:         st.EntriesIn - st.Kept,
		Created:            st.Created,
		Classes:            st.Classes,
		MinClass:           st.ClassSize.Min,
		SmallClasses:       st.SmallClasses,
		MajorityViolations: st.MajorityViolations,
		DuplicateUsers:     st.DuplicateUsers,
		ClassSize:          st.ClassSize.Proto(),
		Solve: &smoothanonpb.SolveInfo{
			Clusters:     st.Clusters,
			ClusterSize:  st.ClusterSize.Proto(),
			FacilityCost: st.FacilityCost,
			Seconds:      st.SolveSeconds,
		},
		Pipeline: &smoothanonpb.PipelineInfo{
			Chunks:       st.Chunks,
			ChunkRows:    st.ChunkRows.Proto(),
			OutputShards: st.ShardCount,
		},
	}
	rep.Jaccard = edits{In: st.EntriesIn, Kept: st.Kept, Created: st.Created}.jaccard()
	if st.Pools > 0 {
		rep.Pipeline.Pool = &smoothanonpb.PoolInfo{Rows: st.PoolRows, Pools: st.Pools, Improved: st.PoolsImproved, Seconds: st.PoolSeconds,
			JaccardBefore: edits{In: st.EntriesIn, Kept: st.Kept - st.PoolKeptGain, Created: st.Created - st.PoolCreatedGain}.jaccard()}
	}
	if st.EntriesIn > 0 {
		rep.SuppressedFraction = float64(rep.Suppressed) / float64(st.EntriesIn)
		rep.CreatedFraction = float64(st.Created) / float64(st.EntriesIn)
	}
	if d := st.InputRows - st.Rows; d > 0 {
		rep.MissingUsers = d
	} else {
		rep.ExtraUsers = -d
	}
	problems := append([]string(nil), st.Problems...)
	if st.MoreProblems > 0 {
		problems = append(problems, fmt.Sprintf("... and %d more problems", st.MoreProblems))
	}
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if st.InputRows < int64(k) {
		add("input has %d rows, fewer than k=%d", st.InputRows, k)
	}
	if st.Rows != st.InputRows {
		add("%d rows released for %d read", st.Rows, st.InputRows)
	}
	if st.RowsWritten != st.Rows {
		add("%d rows written for %d released", st.RowsWritten, st.Rows)
	}
	if st.SmallClasses > 0 {
		add("%d classes smaller than k=%d", st.SmallClasses, k)
	}
	if mode == matrix.Smooth && st.MajorityViolations > 0 {
		add("%d (class, feature) pairs break the majority rule", st.MajorityViolations)
	}
	if mode == matrix.NonSmooth && st.Created > 0 {
		add("%d entries created in a nonsmooth release", st.Created)
	}
	if st.HashCollisions > 0 {
		add("%d rows collide on the class hash", st.HashCollisions)
	}
	if st.DuplicateUsers > 0 {
		add("%d repeated user ids", st.DuplicateUsers)
	}
	rep.Problems = problems
	rep.Valid = len(problems) == 0
	return rep
}
