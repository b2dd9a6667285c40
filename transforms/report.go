package transforms

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// ReportParams configure Report.
type ReportParams struct {
	// Staging is the run's staging directory (release.Run.Staging): Write
	// wrote its shards into release.StagedShards(Staging). Required.
	Staging string
	// K and Mode are what the release must satisfy. Required.
	K    int
	Mode matrix.Mode
	// ChunkSize and InputFiles are reported in PipelineInfo. Optional.
	ChunkSize, InputFiles int64
	// PoolShare is reported in PipelineInfo.Pool when > 0. Optional.
	PoolShare float64
	// Metadata and Shape are the Parquet key/value metadata and the shape
	// of the empty shards Report adds (as WriteParams.Metadata and
	// Shape). Optional; default none and list form.
	Metadata map[string]string
	Shape    matrix.Shape
	// Values is what the features are (matrix.Layout.Values): empty
	// shards of named features get the schema of names. Optional;
	// default ids.
	Values matrix.Values
	// Sensitive is the sensitive rule the report states and counts.
	// Optional; default nil (none).
	Sensitive *SensitiveRule
}

func checkReportParams(p ReportParams) error {
	if p.Staging == "" {
		return errors.New("report: no staging directory")
	}
	if err := verify.CheckParams(verify.Params{K: p.K, Mode: p.Mode}); err != nil {
		return err
	}
	return p.Sensitive.check(p.K)
}

func init() {
	register.DoFn3x1[context.Context, []byte, Stats, error](&reportFn{})
}

// Report is the job's last step. From the single Stats element of stats
// (CombineStats) it writes the shards that received no rows, then into
// the staging: the list of shards with their rows, sizes and CRC-32Cs
// (release.StagedShardList), the repeated user ids found (StagedDuplicates),
// and the RunReport with its verdict (release.StagedReport), last. It
// publishes nothing: the launcher judges the report and publishes
// (release.Run.Finish), so a job whose release is invalid still succeeds.
func Report(s beam.Scope, stats beam.PCollection, params ReportParams) {
	s = s.Scope("Report")
	if err := checkReportParams(params); err != nil {
		panic(err)
	}
	beam.ParDo0(s, &reportFn{Staging: params.Staging, K: params.K, Mode: int(params.Mode), ChunkSize: params.ChunkSize,
		InputFiles: params.InputFiles, PoolShare: params.PoolShare, Metadata: params.Metadata, Shape: params.Shape, Values: params.Values,
		Sensitive: params.Sensitive},
		beam.Impulse(s), beam.SideInput{Input: stats})
}

// StagedDuplicates is where Report writes the repeated user ids the job
// found (JSON, at most MaxProblems of them, as the job saw them: the
// pseudonyms, or the ids when kept), for the launcher to find in the
// input. Absent when there were none.
func StagedDuplicates(staging string) string { return storage.Join(staging, "duplicates.json") }

type reportFn struct {
	Staging    string            `json:"staging"`
	K          int               `json:"k"`
	Mode       int               `json:"mode"`
	ChunkSize  int64             `json:"chunk_size"`
	InputFiles int64             `json:"input_files"`
	PoolShare  float64           `json:"pool_share"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	Shape      matrix.Shape      `json:"shape,omitempty"`
	Values     matrix.Values     `json:"values,omitempty"`
	Sensitive  *SensitiveRule    `json:"sensitive,omitempty"`
}

func (fn *reportFn) ProcessElement(ctx context.Context, _ []byte, st Stats) error {
	if st.InputRows > 0 { // else no vocabulary may have been written
		if err := fn.Sensitive.resolve(ctx); err != nil {
			return err
		}
	}
	rep := BuildReport(st, fn.K, matrix.Mode(fn.Mode), fn.Sensitive)
	rep.Pipeline.ChunkSize = fn.ChunkSize
	rep.Pipeline.InputFiles = fn.InputFiles
	if fn.PoolShare > 0 {
		if rep.Pipeline.Pool == nil {
			rep.Pipeline.Pool = &smoothanonpb.PoolInfo{}
		}
		rep.Pipeline.Pool.Share = fn.PoolShare
	}
	staged := release.StagedShards(fn.Staging)
	long := fn.Shape == matrix.ShapeLong
	empty, err := writeEmptyShards(staged, st.ShardFiles, st.ShardCount, fn.Metadata, fn.Shape, fn.Values)
	if err != nil {
		return markJobError(err)
	}
	files := append(slices.Clone(st.ShardFiles), empty...)
	slices.SortFunc(files, func(a, b ShardFile) int { return cmp.Compare(a.ID, b.ID) })
	shards := make([]storage.Shard, len(files))
	for i, f := range files {
		crc := f.CRC32C
		shards[i] = storage.Shard{Name: ShardName(f.ID, st.ShardCount), Size: f.Size, Rows: f.Rows, CRC32C: &crc}
		if long {
			shards[i].Users = f.Users
		}
	}
	if err := writeJSON(ctx, release.StagedShardList(fn.Staging), shards); err != nil {
		return err
	}
	if len(st.DuplicateIDs) > 0 {
		if err := writeJSON(ctx, StagedDuplicates(fn.Staging), st.DuplicateIDs); err != nil {
			return err
		}
	}
	if _, err := release.WriteReport(ctx, release.StagedReport(fn.Staging), rep); err != nil {
		return markJobError(err)
	}
	if rep.Valid {
		log.Infof(ctx, "release staged: %d rows in %d shards", rep.Rows, len(shards))
	} else {
		log.Infof(ctx, "release failed verification: %s", strings.Join(rep.Problems, "; "))
	}
	return nil
}

func writeJSON(ctx context.Context, uri string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return markJobError(storage.WriteFile(ctx, uri, b))
}

// BuildReport turns the job's Stats into a RunReport with its verdict,
// judged by k, mode and the sensitive rule sens (nil: none).
func BuildReport(st Stats, k int, mode matrix.Mode, sens *SensitiveRule) *smoothanonpb.RunReport {
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
	rep.Features = st.Features.Proto()
	rep.Sensitive = sens.figures(st.Sensitive)
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
	if st.Sensitive.Violations > 0 {
		add("%d (class, feature) pairs break the sensitive rule", st.Sensitive.Violations)
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
