package transforms

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

// Dist accumulates a distribution of integers (verify.Dist: the
// in-process commands and the pipeline summarize alike).
type Dist = verify.Dist

// MaxProblems is how many problem lines Stats keeps.
const MaxProblems = 20

// Stats is the job-wide aggregate that Verify, Solve and Write feed and
// Report judges. Every field merges by addition (or min/max/union), so the
// result is independent of bundling.
type Stats struct {
	// InputRows is the number of rows read (CountRows).
	InputRows int64
	// From the released rows (Verify).
	Rows, EntriesIn, EntriesOut, Kept, Created int64
	// From the classes of identical output rows (Verify).
	Classes, SmallClasses, MajorityViolations, HashCollisions int64
	ClassSize                                                 Dist
	// The sensitive entries and the classes' violations of the sensitive
	// rule (Verify).
	Sensitive SensitiveStats
	// From the chunks (Solve).
	Chunks, Clusters int64
	ChunkRows        Dist
	ClusterSize      Dist
	SolveSeconds     float64
	MaxChunkSeconds  float64
	FacilityCost     float64
	// From the pools (Pool): pools solved, pools whose new release was
	// kept, rows pooled, solve time, and the kept and created entries the
	// kept releases added (negative: removed).
	Pools, PoolsImproved, PoolRows int64
	PoolSeconds                    float64
	PoolKeptGain, PoolCreatedGain  int64
	// From the per-feature counts (Accounting): their summary, and the
	// features written to the feature table.
	Features         verify.FeatureSummary
	FeatureTableRows int64
	// From the shards (Write).
	RowsWritten, DuplicateUsers int64
	ShardFiles                  []ShardFile // shards written, sorted by ID
	ShardCount                  int64       // total number of shards expected
	// DuplicateIDs are repeated user ids as the job saw them (pseudonyms,
	// or the ids when kept), sorted, at most MaxProblems: the launcher
	// finds their rows in the input (Solve, Write).
	DuplicateIDs []string
	// Problems are sample problem lines, sorted, at most MaxProblems.
	Problems []string
	// MoreProblems counts problem lines beyond Problems.
	MoreProblems int64
}

// ShardFile is one shard Write wrote: its index, Parquet rows, users,
// bytes and the CRC-32C of its bytes. Rows and Users differ in long form
// only: the rows are pairs, and users without features have none.
type ShardFile struct {
	ID, Rows, Users, Size int64
	CRC32C                uint32
}

// mergeIDs is the sorted union of a and b, at most MaxProblems long.
func mergeIDs(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxProblems {
		out = out[:MaxProblems]
	}
	return out
}

func (s *Stats) problem(line string) {
	s.Problems = append(s.Problems, line)
	s.trimProblems()
}

func (s *Stats) trimProblems() {
	slices.Sort(s.Problems)
	s.Problems = slices.Compact(s.Problems)
	if extra := len(s.Problems) - MaxProblems; extra > 0 {
		s.MoreProblems += int64(extra)
		s.Problems = s.Problems[:MaxProblems]
	}
}

// mergeStats merges b into a and returns a.
func mergeStats(a, b Stats) Stats {
	a.InputRows += b.InputRows
	a.Rows += b.Rows
	a.EntriesIn += b.EntriesIn
	a.EntriesOut += b.EntriesOut
	a.Kept += b.Kept
	a.Created += b.Created
	a.Classes += b.Classes
	a.SmallClasses += b.SmallClasses
	a.MajorityViolations += b.MajorityViolations
	a.HashCollisions += b.HashCollisions
	a.Sensitive.merge(b.Sensitive)
	a.ClassSize.Merge(b.ClassSize)
	a.Chunks += b.Chunks
	a.Clusters += b.Clusters
	a.ChunkRows.Merge(b.ChunkRows)
	a.ClusterSize.Merge(b.ClusterSize)
	a.SolveSeconds += b.SolveSeconds
	a.MaxChunkSeconds = max(a.MaxChunkSeconds, b.MaxChunkSeconds)
	a.FacilityCost += b.FacilityCost
	a.Pools += b.Pools
	a.PoolsImproved += b.PoolsImproved
	a.PoolRows += b.PoolRows
	a.PoolSeconds += b.PoolSeconds
	a.PoolKeptGain += b.PoolKeptGain
	a.PoolCreatedGain += b.PoolCreatedGain
	a.Features.Merge(b.Features)
	a.FeatureTableRows += b.FeatureTableRows
	a.RowsWritten += b.RowsWritten
	a.DuplicateUsers += b.DuplicateUsers
	if len(b.ShardFiles) > 0 {
		a.ShardFiles = append(slices.Clone(a.ShardFiles), b.ShardFiles...)
		slices.SortFunc(a.ShardFiles, func(x, y ShardFile) int { return cmp.Compare(x.ID, y.ID) })
	}
	if len(b.DuplicateIDs) > 0 {
		a.DuplicateIDs = mergeIDs(a.DuplicateIDs, b.DuplicateIDs)
	}
	a.ShardCount = max(a.ShardCount, b.ShardCount)
	a.MoreProblems += b.MoreProblems
	if len(b.Problems) > 0 {
		a.Problems = append(slices.Clone(a.Problems), b.Problems...)
		a.trimProblems()
	}
	return a
}

func encStats(s Stats) ([]byte, error) { return gobEncode(s) }
func decStats(p []byte) (Stats, error) {
	var s Stats
	err := gobDecode(p, &s)
	return s, err
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(Stats{}), encStats, decStats)
	register.Function2x1(mergeStats)
	register.Function1x1(chunkStats)
	register.Emitter1[Stats]()
	register.Function1x1(inputRowsStats)
	register.Function1x1(blockRows)
}

func inputRowsStats(n int) Stats { return Stats{InputRows: int64(n)} }

// CountRows returns a PCollection<Stats> with InputRows set to the number
// of rows of a PCollection<matrix.Matrix>.
func CountRows(s beam.Scope, blocks beam.PCollection) beam.PCollection {
	s = s.Scope("CountRows")
	return beam.ParDo(s, inputRowsStats, beam.Combine(s, sumInts, beam.ParDo(s, blockRows, blocks)))
}

func blockRows(b matrix.Matrix) int { return b.NumRows() }

// chunkStats turns one chunk's solve into Stats.
func chunkStats(c ChunkStat) Stats {
	st := Stats{Chunks: 1, Clusters: c.Clusters, ClusterSize: c.ClusterSizes, SolveSeconds: c.Seconds,
		MaxChunkSeconds: c.Seconds, FacilityCost: c.FacilityCost, DuplicateUsers: c.DuplicateUsers, DuplicateIDs: c.DuplicateIDs}
	if c.DuplicateUsers > 0 {
		st.problem(fmt.Sprintf("chunk %d: %d repeated user ids", c.Chunk, c.DuplicateUsers))
	}
	st.ChunkRows.Add(c.Rows)
	return st
}

// CombineStats merges PCollections of Stats and ChunkStat (any number of
// each) into a single Stats element.
func CombineStats(s beam.Scope, stats []beam.PCollection, chunks beam.PCollection) beam.PCollection {
	s = s.Scope("CombineStats")
	all := append(slices.Clone(stats), beam.ParDo(s, chunkStats, chunks))
	return beam.Combine(s, mergeStats, beam.Flatten(s, all...))
}
