package transforms

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
)

// DefaultRowsPerShard is the target number of rows per output shard when
// the shard count is automatic.
const DefaultRowsPerShard = 1 << 20

// WriteParams configure Write.
type WriteParams struct {
	// Dir is the directory the shards are written to (the staging
	// directory; Publish moves it into place), local or a URI. Required; a
	// local one must exist.
	Dir string
	// Shards is the number of output files. Optional; default 0 = automatic,
	// ceil(rows / RowsPerShard).
	Shards int64
	// RowsPerShard sets the automatic shard count. Optional; default
	// DefaultRowsPerShard.
	RowsPerShard int64
	// RowGroupRows is the Parquet row group size. Optional; default
	// matrix.DefaultRowGroupRows.
	RowGroupRows int64
	// Metadata is every shard's Parquet key/value metadata. Optional;
	// default none.
	Metadata map[string]string
}

func checkWriteParams(p WriteParams) error {
	switch {
	case p.Dir == "":
		return fmt.Errorf("write: no output directory")
	case p.Shards < 0:
		return fmt.Errorf("write: shards %d, want >= 0", p.Shards)
	case p.RowsPerShard < 0:
		return fmt.Errorf("write: rows per shard %d, want >= 0", p.RowsPerShard)
	case p.RowGroupRows < 0:
		return fmt.Errorf("write: row group rows %d, want >= 0", p.RowGroupRows)
	}
	return nil
}

var shardRows = beam.NewDistribution("smoothanon", "shard_rows")

func init() {
	register.DoFn3x0[OutBlock, int, func(int64, matrix.Matrix)](&shardKeyFn{})
	register.Emitter2[int64, matrix.Matrix]()
	register.DoFn5x1[context.Context, int64, func(*matrix.Matrix) bool, int, func(Stats), error](&writeShardFn{})
	register.Iter1[matrix.Matrix]()
	register.Function1x1(outRows)
}

// ShardName is the file name of shard i of n.
func ShardName(i, n int64) string { return fmt.Sprintf("part-%05d-of-%05d.parquet", i, n) }

// shardCount is the number of shards for total rows.
func shardCount(total, shards, perShard int64) int64 {
	if shards > 0 {
		return shards
	}
	if perShard <= 0 {
		perShard = DefaultRowsPerShard
	}
	return max(1, (total+perShard-1)/perShard)
}

// shardOf routes a user to a shard by a hash of its id (not by chunk, so
// shard contents reveal nothing about similarity).
func shardOf(user string, n int64) int64 {
	return int64(userHash(user) % uint64(n))
}

// Write writes the released rows of a PCollection<OutBlock> as sharded
// Parquet files ShardName(i, n) in Dir: rows are routed by a hash of the
// user id and sorted by user id inside a shard, so neither chunk nor
// cluster nor LSH order shows in the output. Each shard is written under a
// temporary name and renamed when complete; a retried shard rewrites the
// whole file from its complete group, so retries neither duplicate nor lose
// rows. It returns a PCollection<Stats> with rows written, shard ids and
// duplicate user ids found.
func Write(s beam.Scope, blocks beam.PCollection, params WriteParams) beam.PCollection {
	s = s.Scope("Write")
	if err := checkWriteParams(params); err != nil {
		panic(err)
	}
	total := beam.Combine(s, sumInts, beam.ParDo(s, outRows, blocks))
	keyed := beam.ParDo(s, &shardKeyFn{Shards: params.Shards, PerShard: params.RowsPerShard}, blocks, beam.SideInput{Input: total})
	grouped := beam.GroupByKey(s, keyed)
	return beam.ParDo(s, &writeShardFn{Dir: params.Dir, Shards: params.Shards, PerShard: params.RowsPerShard,
		RowGroupRows: params.RowGroupRows, Metadata: params.Metadata}, grouped, beam.SideInput{Input: total})
}

func outRows(b OutBlock) int { return b.In.NumRows() }

// shardKeyFn splits a block's released rows into one piece per shard.
type shardKeyFn struct {
	Shards   int64 `json:"shards"`
	PerShard int64 `json:"per_shard"`
}

func (fn *shardKeyFn) ProcessElement(b OutBlock, total int, emit func(int64, matrix.Matrix)) {
	n := shardCount(int64(total), fn.Shards, fn.PerShard)
	shards := make([]int64, b.Out.NumRows())
	for i, u := range b.Out.Users {
		shards[i] = shardOf(u, n)
	}
	for shard, rows := range groupRows(shards) {
		emit(shard, pick(&b.Out, rows))
	}
}

type writeShardFn struct {
	Dir          string `json:"dir"`
	Shards       int64  `json:"shards"`
	PerShard     int64  `json:"per_shard"`
	RowGroupRows int64  `json:"row_group_rows"`
	// Metadata is omitted when empty, so a job without it keeps its graph.
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (fn *writeShardFn) ProcessElement(ctx context.Context, shard int64, iter func(*matrix.Matrix) bool, total int, emit func(Stats)) error {
	rows := gatherShard(iter)
	n := shardCount(int64(total), fn.Shards, fn.PerShard)
	st := Stats{Shards: []int64{shard}, ShardCount: n}
	for i := 1; i < rows.NumRows(); i++ {
		if rows.Users[i] == rows.Users[i-1] {
			st.DuplicateUsers++
		}
	}
	if st.DuplicateUsers > 0 {
		st.problem(fmt.Sprintf("shard %d: %d repeated user ids (merge them before anonymizing, e.g. with --dedupe=union at import)", shard, st.DuplicateUsers))
	}
	path := storage.Join(fn.Dir, ShardName(shard, n))
	w, err := matrix.Create(path, matrix.WriterOptions{RowGroupRows: fn.RowGroupRows, Metadata: fn.Metadata})
	if err != nil {
		return err
	}
	for i, u := range rows.Users {
		if err := w.Write(u, rows.Row(i)); err != nil {
			w.Abort()
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	st.RowsWritten = int64(rows.NumRows())
	shardRows.Update(ctx, st.RowsWritten)
	emit(st)
	return nil
}

// gatherShard collects a shard's pieces into one matrix sorted by user id
// (rows of one id in arrival order), copying each row once.
func gatherShard(iter func(*matrix.Matrix) bool) *matrix.Matrix {
	type ref struct{ piece, row int32 }
	var pieces []matrix.Matrix
	var refs []ref
	var b matrix.Matrix
	entries := 0
	for iter(&b) {
		for i := range b.Users {
			refs = append(refs, ref{int32(len(pieces)), int32(i)})
		}
		entries += len(b.Features)
		pieces = append(pieces, b)
		b = matrix.Matrix{}
	}
	user := func(r ref) string { return pieces[r.piece].Users[r.row] }
	slices.SortStableFunc(refs, func(x, y ref) int { return strings.Compare(user(x), user(y)) })
	out := matrix.New(len(refs), entries)
	for _, r := range refs {
		appendRow(out, &pieces[r.piece], int(r.row))
	}
	return out
}

// writeEmptyShards creates the shards of dir that received no rows, so
// the release always holds files 0..n-1.
func writeEmptyShards(dir string, written []int64, n int64, md map[string]string) error {
	for i := int64(0); i < n; i++ {
		if _, ok := slices.BinarySearch(written, i); ok {
			continue
		}
		path := storage.Join(dir, ShardName(i, n))
		if ok, err := storage.Exists(context.Background(), path); err != nil {
			return err
		} else if ok {
			continue
		}
		if err := matrix.WriteMatrix(path, matrix.New(0, 0), matrix.WriterOptions{Metadata: md}); err != nil {
			return err
		}
	}
	return nil
}
