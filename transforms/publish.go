package transforms

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/verify"
)

// Staging layout: Publish expects Write to have written the shards to
// StagingRelease(staging) and writes the report to StagingReport(staging).
const (
	stagingReleaseDir = "release"
	stagingReportFile = "report.json"
	stagingDoneFile   = "published"
)

// StagingRelease is the directory Write must fill for Publish.
func StagingRelease(staging string) string { return filepath.Join(staging, stagingReleaseDir) }

// StagingReport is where Publish writes the RunReport (protojson).
func StagingReport(staging string) string { return filepath.Join(staging, stagingReportFile) }

// PublishParams configure Publish.
type PublishParams struct {
	// Staging is the run's staging directory, on the same filesystem as
	// Output. Required.
	Staging string
	// Output is the release directory. Required.
	Output string
	// Overwrite allows replacing a non-empty Output. Optional; default false.
	Overwrite bool
	// K and Mode are what the release must satisfy. Required.
	K    int
	Mode matrix.Mode
	// ChunkSize and InputFiles are reported in PipelineInfo. Optional.
	ChunkSize, InputFiles int64
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
	case filepath.Clean(p.Staging) == filepath.Clean(p.Output):
		return fmt.Errorf("publish: staging and output are both %s", p.Output)
	}
	return verify.CheckParams(verify.Params{K: p.K, Mode: p.Mode})
}

func init() {
	register.DoFn3x1[[]byte, Stats, func(string), error](&publishFn{})
	register.Emitter1[string]()
}

// ErrVerification marks a job that failed because its release did not
// verify.
var ErrVerification = errors.New("release failed verification")

// Publish judges the single Stats element of stats (from CombineStats):
// it writes the RunReport to StagingReport, and only when the release is
// valid — every class ≥ k, the mode's rule held, every input row released
// exactly once — moves the staged shards to Output with one rename. An
// invalid release fails the job and nothing is published. It returns a
// PCollection<string> holding Output.
func Publish(s beam.Scope, stats beam.PCollection, params PublishParams) beam.PCollection {
	s = s.Scope("Publish")
	if err := checkPublishParams(params); err != nil {
		panic(err)
	}
	return beam.ParDo(s, &publishFn{Staging: params.Staging, Output: params.Output, Overwrite: params.Overwrite,
		K: params.K, Mode: int(params.Mode), ChunkSize: params.ChunkSize, InputFiles: params.InputFiles, Metadata: params.Metadata},
		beam.Impulse(s), beam.SideInput{Input: stats})
}

type publishFn struct {
	Staging    string            `json:"staging"`
	Output     string            `json:"output"`
	Overwrite  bool              `json:"overwrite"`
	K          int               `json:"k"`
	Mode       int               `json:"mode"`
	ChunkSize  int64             `json:"chunk_size"`
	InputFiles int64             `json:"input_files"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

func (fn *publishFn) ProcessElement(_ []byte, st Stats, emit func(string)) error {
	rep := BuildReport(st, fn.K, matrix.Mode(fn.Mode))
	rep.Pipeline.ChunkSize = fn.ChunkSize
	rep.Pipeline.InputFiles = fn.InputFiles
	if err := WriteReport(StagingReport(fn.Staging), rep); err != nil {
		return err
	}
	if !rep.Valid {
		return fmt.Errorf("%w: %s", ErrVerification, strings.Join(rep.Problems, "; "))
	}
	release := StagingRelease(fn.Staging)
	if _, err := os.Stat(filepath.Join(fn.Staging, stagingDoneFile)); err == nil {
		emit(fn.Output) // a retry after a successful publish
		return nil
	}
	if err := writeEmptyShards(release, st.Shards, st.ShardCount, fn.Metadata); err != nil {
		return err
	}
	if err := PublishDir(release, fn.Output, fn.Overwrite); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(fn.Staging, stagingDoneFile), nil, 0o644); err != nil {
		return err
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
	if union := st.EntriesIn + st.Created; union > 0 {
		rep.Jaccard = float64(st.Kept) / float64(union)
	} else {
		rep.Jaccard = 1
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

// WriteReport writes rep as indented protojson to path atomically.
func WriteReport(path string, rep *smoothanonpb.RunReport) error {
	b, err := protojson.MarshalOptions{Multiline: true, EmitUnpopulated: true}.Marshal(rep)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadReport reads a report written by WriteReport.
func ReadReport(path string) (*smoothanonpb.RunReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rep := &smoothanonpb.RunReport{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// CheckOutput returns an error when dir exists and is not an empty
// directory (unless overwrite), so a run never clobbers a release.
func CheckOutput(dir string, overwrite bool) error {
	empty, exists, err := dirEmpty(dir)
	if err != nil {
		return err
	}
	if exists && !empty && !overwrite {
		return fmt.Errorf("output %s exists and is not empty (pass --overwrite to replace it)", dir)
	}
	return nil
}

func dirEmpty(dir string) (empty, exists bool, err error) {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !st.IsDir() {
		return false, true, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return false, true, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return true, true, nil
	}
	return false, true, err
}

// PublishDir moves the directory release to output with a rename. An
// existing empty output is replaced; a non-empty one only when overwrite,
// and then it is renamed aside first and removed after the new release is
// in place.
func PublishDir(release, output string, overwrite bool) error {
	empty, exists, err := dirEmpty(output)
	if err != nil {
		return err
	}
	var old string
	switch {
	case exists && empty:
		if err := os.Remove(output); err != nil {
			return err
		}
	case exists && !overwrite:
		return fmt.Errorf("output %s exists and is not empty (pass --overwrite to replace it)", output)
	case exists:
		old = release + ".replaced"
		if err := os.Rename(output, old); err != nil {
			return err
		}
	}
	if err := os.Rename(release, output); err != nil {
		if old != "" {
			os.Rename(old, output)
		}
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}
