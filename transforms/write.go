package transforms

import (
	"container/heap"
	"context"
	"fmt"
	"iter"
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
	// Dir is the directory the shards are written to (the run's staging,
	// release.StagedShards; the launcher publishes them), local or a URI.
	// Required; a local one must exist.
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
	// Shape is the shards' shape (matrix.WriterOptions.Shape): a row per
	// user, or with matrix.ShapeLong a row per released pair, each user's
	// pairs on consecutive rows. Optional; default list form.
	Shape matrix.Shape
	// Vocab is the staged vocabulary (BuildVocab's VocabParams.Path) of
	// named features: the shards hold each feature's name, not its id.
	// Every input row reaches Write only after Read has used the file,
	// so it exists by then. Optional; default ids.
	Vocab string
	// RunRows and RunEntries bound the rows and feature entries of one
	// group of a shard's rows (see Write). Optional; default DefaultRunRows
	// and DefaultRunEntries.
	RunRows, RunEntries int64
	// Rows is the number of released rows (the input's: a release holds
	// every user once). With MaxEntries it sets the shards and their runs
	// before the job starts, so that grouping the rows needs no side input
	// and runs where the releases are made: on Flink, reading the releases
	// back to count them cost a pass over them. Required; >= 1.
	Rows int64
	// MaxEntries bounds the release's feature entries from above. Required;
	// >= 0.
	MaxEntries int64
	// Scratch is where the sorted runs of shards larger than one group are
	// kept until their shard is written; the caller removes it. Optional;
	// default Dir + ".runs" (inside the pipeline's staging directory).
	Scratch string
}

// Group bounds: a group is at most a few MB encoded, well under a Flink
// sort buffer (10 MB on a 2-slot TaskManager with 768 MB managed memory).
const (
	DefaultRunRows    = 1 << 16
	DefaultRunEntries = 1 << 21
)

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
	case p.Rows < 1:
		return fmt.Errorf("write: %d rows, want >= 1", p.Rows)
	case p.MaxEntries < 0:
		return fmt.Errorf("write: at most %d entries, want >= 0", p.MaxEntries)
	case p.Shape != matrix.ShapeAuto && p.Shape != matrix.ShapeList && p.Shape != matrix.ShapeLong:
		return fmt.Errorf("write: shape %v, want list or long", p.Shape)
	case p.RunRows < 0 || p.RunEntries < 0:
		return fmt.Errorf("write: run rows %d and entries %d, want >= 0", p.RunRows, p.RunEntries)
	case p.Scratch == "" && bucketRoot(p.Dir):
		return fmt.Errorf("write: %s is a bucket root, where the default scratch (beside it) would be another bucket: set Scratch", p.Dir)
	case p.Scratch != "" && storage.Clean(p.Scratch) == storage.Clean(p.Dir):
		return fmt.Errorf("write: scratch and output are both %s", p.Dir)
	}
	return nil
}

func bucketRoot(uri string) bool {
	dir, _ := storage.Split(uri)
	return !storage.IsLocal(uri) && dir == storage.Scheme(uri)+"://"
}

func withWriteDefaults(p WriteParams) WriteParams {
	if p.RowsPerShard == 0 {
		p.RowsPerShard = DefaultRowsPerShard
	}
	if p.RunRows == 0 {
		p.RunRows = DefaultRunRows
	}
	if p.RunEntries == 0 {
		p.RunEntries = DefaultRunEntries
	}
	if p.Scratch == "" {
		p.Scratch = storage.Clean(p.Dir) + ".runs"
	}
	return p
}

var shardRows = beam.NewDistribution("smoothanon", "shard_rows")

func init() {
	register.DoFn2x0[OutBlock, func(int64, matrix.Matrix)](&groupKeyFn{})
	register.Emitter2[int64, matrix.Matrix]()
	register.DoFn5x1[context.Context, int64, func(*matrix.Matrix) bool, func(Stats), func(int64, int64), error](&writeGroupFn{})
	register.Iter1[matrix.Matrix]()
	register.Emitter2[int64, int64]()
	register.DoFn4x1[context.Context, int64, func(*int64) bool, func(Stats), error](&mergeRunsFn{})
	register.Iter1[int64]()
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

// layout is how a release's rows are grouped for writing: shards files,
// each gathered from runs groups of its rows (1 = written from its one
// group directly).
type layout struct{ Shards, Runs int64 }

// newLayout sizes the groups of p.Rows rows and at most p.MaxEntries
// entries so that none exceeds RunRows rows or RunEntries entries on
// average. p has its defaults (withWriteDefaults).
func newLayout(p WriteParams) layout {
	n := shardCount(p.Rows, p.Shards, p.RowsPerShard)
	runs := max(1, ceilDiv(ceilDiv(p.Rows, n), p.RunRows), ceilDiv(ceilDiv(p.MaxEntries, n), p.RunEntries))
	return layout{Shards: n, Runs: runs}
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// group is the key of a user's group: its shard times runs plus its run.
// The shard is the hash of the user id modulo shards (not the chunk, so
// shard contents reveal nothing about similarity), the run the hash's
// other digits modulo runs.
func (l layout) group(user string) int64 {
	h := userHash(user)
	shard, run := h%uint64(l.Shards), h/uint64(l.Shards)%uint64(l.Runs)
	return int64(shard)*l.Runs + int64(run)
}

// Write writes the released rows of a PCollection<OutBlock> as sharded
// Parquet files ShardName(i, n) in Dir: rows are routed by a hash of the
// user id and sorted by user id inside a shard, so neither chunk nor
// cluster nor LSH order shows in the output. It returns a
// PCollection<Stats> with rows written, shard ids and duplicate user ids
// found.
//
// Rows are grouped by a key that splits each shard into runs of at most
// about RunRows rows and RunEntries entries. A shard of one run is written
// straight from its group; otherwise each run is sorted and kept in
// Scratch, and a second grouping, of run numbers only, merges a shard's
// runs into its file. No grouped value is ever larger than a run: Flink's
// batch runner turns a key's values into one sort record, and a whole
// shard would not fit its sort buffer. Both ways write the same bytes.
//
// Files are written under a temporary name and renamed when complete; a
// retried group rewrites its whole file, so retries neither duplicate nor
// lose rows.
func Write(s beam.Scope, blocks beam.PCollection, params WriteParams) beam.PCollection {
	s = s.Scope("Write")
	if err := checkWriteParams(params); err != nil {
		panic(err)
	}
	params = withWriteDefaults(params)
	keyed := beam.ParDo(s, &groupKeyFn{Layout: newLayout(params)}, blocks)
	direct, runs := beam.ParDo2(s, &writeGroupFn{Params: params}, beam.GroupByKey(s, keyed))
	merged := beam.ParDo(s, &mergeRunsFn{Params: params}, beam.GroupByKey(s, runs))
	return beam.Flatten(s, direct, merged)
}

// groupKeyFn splits a block's released rows into one piece per group.
type groupKeyFn struct {
	Layout layout `json:"layout"`
}

func (fn *groupKeyFn) ProcessElement(b OutBlock, emit func(int64, matrix.Matrix)) {
	groups := make([]int64, b.Out.NumRows())
	for i, u := range b.Out.Users {
		groups[i] = fn.Layout.group(u)
	}
	for g, rows := range groupRows(groups) {
		emit(g, pick(&b.Out, rows))
	}
}

// writeGroupFn writes a group as its shard's file when the shard is one
// run, and otherwise as a sorted run, emitting (shard, run).
type writeGroupFn struct {
	Params WriteParams `json:"params"`
}

func (fn *writeGroupFn) ProcessElement(ctx context.Context, g int64, iter func(*matrix.Matrix) bool,
	emit func(Stats), emitRun func(int64, int64)) error {
	l := newLayout(fn.Params)
	m := gatherShard(iter)
	shard, run := g/l.Runs, g%l.Runs
	if l.Runs == 1 {
		st, err := writeShard(ctx, fn.Params, shard, l.Shards, matrixRows(m))
		if err == nil {
			emit(st)
		}
		return err
	}
	if err := writeRun(ctx, fn.Params.Scratch, shard, run, m); err != nil {
		return markJobError(err)
	}
	emitRun(shard, run)
	return nil
}

// mergeRunsFn writes a shard from its runs.
type mergeRunsFn struct {
	Params WriteParams `json:"params"`
}

func (fn *mergeRunsFn) ProcessElement(ctx context.Context, shard int64, iter func(*int64) bool, emit func(Stats)) error {
	var runs []int64
	for run := int64(0); iter(&run); {
		runs = append(runs, run)
	}
	slices.Sort(runs)
	pieces := make([]matrix.Matrix, 0, len(runs))
	for _, run := range slices.Compact(runs) {
		m, err := readRun(ctx, fn.Params.Scratch, shard, run)
		if err != nil {
			return markJobError(err)
		}
		pieces = append(pieces, m)
	}
	// The runs are merged as they are written: a shard is held once, in
	// its decoded runs, never gathered into a second copy.
	st, err := writeShard(ctx, fn.Params, shard, newLayout(fn.Params).Shards, mergeRuns(pieces))
	if err == nil {
		emit(st)
	}
	return err
}

// sortedRows yields rows in user id order, ties in a fixed order.
type sortedRows = iter.Seq2[string, []uint32]

// matrixRows yields the rows of m, which are sorted by user id.
func matrixRows(m *matrix.Matrix) sortedRows {
	return func(yield func(string, []uint32) bool) {
		for i, u := range m.Users {
			if !yield(u, m.Row(i)) {
				return
			}
		}
	}
}

// mergeRuns yields the rows of runs, each sorted by user id, in user id
// order; equal ids in run order, then row order: the order gatherShard
// gives the runs' concatenation.
func mergeRuns(runs []matrix.Matrix) sortedRows {
	return func(yield func(string, []uint32) bool) {
		next := make([]int, len(runs)) // each run's next row
		h := &runHeap{runs: runs, next: next}
		for r := range runs {
			if runs[r].NumRows() > 0 {
				h.live = append(h.live, r)
			}
		}
		heap.Init(h)
		for h.Len() > 0 {
			r := h.live[0]
			if !yield(runs[r].Users[next[r]], runs[r].Row(next[r])) {
				return
			}
			if next[r]++; next[r] == runs[r].NumRows() {
				heap.Pop(h)
			} else {
				heap.Fix(h, 0)
			}
		}
	}
}

// runHeap orders the runs with rows left by their next row's user id,
// then by run.
type runHeap struct {
	runs []matrix.Matrix
	next []int
	live []int
}

func (h *runHeap) Len() int { return len(h.live) }
func (h *runHeap) Less(i, j int) bool {
	a, b := h.live[i], h.live[j]
	if c := strings.Compare(h.runs[a].Users[h.next[a]], h.runs[b].Users[h.next[b]]); c != 0 {
		return c < 0
	}
	return a < b
}
func (h *runHeap) Swap(i, j int) { h.live[i], h.live[j] = h.live[j], h.live[i] }
func (h *runHeap) Push(x any)    { h.live = append(h.live, x.(int)) }
func (h *runHeap) Pop() any {
	x := h.live[len(h.live)-1]
	h.live = h.live[:len(h.live)-1]
	return x
}

// writeShard writes rows (sorted by user id) as shard of n.
func writeShard(ctx context.Context, p WriteParams, shard, n int64, rows sortedRows) (Stats, error) {
	st := Stats{ShardCount: n}
	opts := matrix.WriterOptions{RowGroupRows: p.RowGroupRows, Metadata: p.Metadata, Shape: p.Shape}
	if p.Vocab != "" {
		v, err := loadVocab(ctx, p.Vocab)
		if err != nil {
			return st, markJobError(err)
		}
		opts.Vocab = v
	}
	f, err := writeShardFile(storage.Join(p.Dir, ShardName(shard, n)), rows, opts, &st)
	if err != nil {
		return st, err
	}
	if st.DuplicateUsers > 0 {
		st.problem(fmt.Sprintf("shard %d: %d repeated user ids", shard, st.DuplicateUsers))
	}
	f.ID = shard
	st.ShardFiles = []ShardFile{f}
	st.RowsWritten = f.Users
	shardRows.Update(ctx, st.RowsWritten)
	return st, nil
}

// writeShardFile writes rows to path and describes the file written (in
// long form its rows are pairs, its users those rows' users and the
// users without features); a
// user id that repeats the row before it is counted in st (its first
// MaxProblems ids named), when st is not nil.
func writeShardFile(path string, rows sortedRows, opts matrix.WriterOptions, st *Stats) (ShardFile, error) {
	w, err := matrix.Create(path, opts)
	if err != nil {
		return ShardFile{}, markJobError(err)
	}
	var rep repeats
	for u, features := range rows {
		rep.add(u)
		if err = w.Write(u, features); err != nil {
			break
		}
	}
	if err != nil {
		w.Abort()
		return ShardFile{}, markJobError(err)
	}
	if st != nil {
		st.DuplicateUsers, st.DuplicateIDs = rep.n, rep.ids
	}
	if err := w.Close(); err != nil {
		return ShardFile{}, markJobError(err)
	}
	return ShardFile{Rows: w.FileRows(), Users: w.Rows(), Size: w.Size(), CRC32C: w.CRC32C()}, nil
}

// runPath is where run of shard is kept.
func runPath(scratch string, shard, run int64) string {
	return storage.Join(scratch, fmt.Sprintf("run-%05d-%05d", shard, run))
}

// writeRun keeps a sorted run, encoded as a block of rows.
func writeRun(ctx context.Context, scratch string, shard, run int64, m *matrix.Matrix) error {
	if err := storage.MkdirAll(scratch); err != nil {
		return err
	}
	w, err := storage.Create(ctx, runPath(scratch, shard, run))
	if err != nil {
		return err
	}
	if _, err := w.Write(encMatrix(*m)); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

func readRun(ctx context.Context, scratch string, shard, run int64) (matrix.Matrix, error) {
	path := runPath(scratch, shard, run)
	b, err := storage.ReadFile(ctx, path)
	if err != nil {
		return matrix.Matrix{}, err
	}
	m, err := decMatrix(b)
	if err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
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
// the release always holds files 0..n-1, and describes them.
// Named features (values, matrix.ValuesStrings or ValuesIntegers) give
// them the schema of names.
func writeEmptyShards(dir string, written []ShardFile, n int64, md map[string]string, shape matrix.Shape, values matrix.Values) ([]ShardFile, error) {
	opts := matrix.WriterOptions{Metadata: md, Shape: shape}
	if values == matrix.ValuesStrings || values == matrix.ValuesIntegers {
		opts.Vocab = matrix.NewGrowingVocab(values)
	}
	var out []ShardFile
	for i := int64(0); i < n; i++ {
		if slices.ContainsFunc(written, func(f ShardFile) bool { return f.ID == i }) {
			continue
		}
		f, err := writeShardFile(storage.Join(dir, ShardName(i, n)), matrixRows(matrix.New(0, 0)), opts, nil)
		if err != nil {
			return nil, err
		}
		f.ID = i
		out = append(out, f)
	}
	return out, nil
}
