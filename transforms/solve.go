package transforms

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"golang.org/x/sync/semaphore"

	"github.com/smoothanon/smoothanon/lsh"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
)

// SolveParams configure Solve (and Pool, which solves again with them).
type SolveParams struct {
	// Solver is every chunk's solve, carried whole into the job graph
	// (solveFn). Required: Solver.K, at least 2; the rest as
	// solver.Params documents, with these meanings here:
	//   - Solver.Seed is the run's seed: chunk c is solved with
	//     ChunkSeed(Seed, c) and pool p with PoolSeed(Seed, p), so a
	//     retried chunk reproduces its release.
	//   - Solver.Workers is the solver's parallelism per chunk; a worker
	//     process solves GOMAXPROCS/Workers chunks at once. 0 means
	//     GOMAXPROCS under solver.StartBoth, 1 under solver.StartMondrian
	//     (whose solve is mostly sequential: chunks solved side by side
	//     use the cores better).
	Solver solver.Params
	// PoolShare is the share of each chunk's rows, its worst-served
	// clusters, that Solve sets aside for Pool (see pool.go). Optional;
	// default 0 (none); else within [MinPoolShare, MaxPoolShare].
	PoolShare float64
	// SensitiveNames, for a run of named features under a sensitive
	// list, is the list Solver.Sensitive becomes on the workers (see
	// SensitiveNames). Optional; Solver.Sensitive must then be empty.
	SensitiveNames *SensitiveNames
}

// CheckSolveParams reports the first bad parameter of p: the solver's
// (solver.CheckParams), then the pipeline's own.
func CheckSolveParams(p SolveParams) error {
	if err := solver.CheckParams(p.Solver, p.Solver.K); err != nil {
		return err
	}
	if p.Solver.K < 2 {
		return fmt.Errorf("k = %d: the pipeline needs k >= 2", p.Solver.K)
	}
	if n := p.SensitiveNames; n != nil && (len(p.Solver.Sensitive) > 0 || len(n.Entries) == 0 || n.Vocab == "") {
		return fmt.Errorf("sensitive names %d (vocabulary %q) with %d feature ids: want names and a vocabulary, or ids", len(n.Entries), n.Vocab, len(p.Solver.Sensitive))
	}
	return CheckPoolShare(p.PoolShare)
}

// ChunkStat describes the solve of one chunk.
type ChunkStat struct {
	Chunk        int64
	Rows         int64
	Clusters     int64
	ClusterSizes Dist
	Seconds      float64
	FacilityCost float64
	// DuplicateUsers counts the chunk's repeated user ids, DuplicateIDs
	// lists some; a chunk with any is not solved and releases nothing.
	DuplicateUsers int64
	DuplicateIDs   []string
}

var (
	solveMillis    = beam.NewDistribution("smoothanon", "solve_ms")
	chunkRowsDist  = beam.NewDistribution("smoothanon", "chunk_rows")
	rowsSolved     = beam.NewCounter("smoothanon", "rows_solved")
	releaseEntries = beam.NewCounter("smoothanon", "entries_out")
)

func init() {
	beam.RegisterCoder(reflect.TypeOf(ChunkStat{}), encChunkStat, decChunkStat)
	register.DoFn6x1[context.Context, int64, func(*ChunkBlock) bool, func(OutBlock), func(int64, PoolBlock), func(ChunkStat), error](&solveFn{})
	register.Iter1[ChunkBlock]()
	register.Emitter1[OutBlock]()
	register.Emitter1[ChunkStat]()
}

func encChunkStat(c ChunkStat) ([]byte, error) { return gobEncode(c) }
func decChunkStat(p []byte) (ChunkStat, error) {
	var c ChunkStat
	err := gobDecode(p, &c)
	return c, err
}

// Solve runs solver.Solve on every chunk of a PCollection<KV<int64,
// ChunkBlock>> (from Chunk). It returns the released rows,
// PCollection<OutBlock> (blocks bounded as Read's); the rows set aside for
// Pool with their first release, PCollection<KV<int64, PoolBlock>> keyed
// by chunk (empty unless PoolShare > 0 and there is more than one chunk);
// and one ChunkStat per chunk. Rows of a chunk are sorted by their sort
// key before solving, so the result does not depend on the order the
// shuffle delivered them in. The solve reads no side input (see
// ChunkBlock).
func Solve(s beam.Scope, chunks beam.PCollection, params SolveParams) (rows, setAside, stats beam.PCollection) {
	s = s.Scope("Solve")
	if err := CheckSolveParams(params); err != nil {
		panic(fmt.Errorf("solve: %w", err))
	}
	grouped := beam.GroupByKey(s, chunks)
	return beam.ParDo3(s, newSolveFn(params), grouped)
}

// chunkWorkers is the number of goroutines a chunk's solve runs: Workers
// when set; else 1 under StartMondrian, whose solve is mostly one
// sequential local search, so a process solves one chunk per core; else 0
// (every core for one chunk).
func chunkWorkers(p solver.Params) int {
	if p.Workers == 0 && p.Start == solver.StartMondrian {
		return 1
	}
	return p.Workers
}

// ChunkSeed is the solver seed of chunk c in a run with seed.
func ChunkSeed(seed, chunk int64) int64 {
	return int64(lsh.Mix64(uint64(seed)^0x5851F42D4C957F2D) ^ lsh.Mix64(uint64(chunk)+0x14057B7EF767814F))
}

// solveFn solves chunks. Its exported fields are its whole configuration:
// the runner receives them as JSON in the job graph.
type solveFn struct {
	// Solver is SolveParams.Solver with Workers resolved (chunkWorkers);
	// its Seed is the run's, mixed with the chunk's or pool's number for
	// each solve (solverParams).
	Solver solver.Params `json:"solver"`
	// PoolShare is SolveParams.PoolShare.
	PoolShare float64 `json:"pool_share"`
	// SensitiveNames is SolveParams.SensitiveNames, resolved into
	// Solver.Sensitive at the first chunk (resolve).
	SensitiveNames *SensitiveNames `json:"sensitive_names,omitempty"`
	resolved       bool
}

// newSolveFn is the solveFn of p.
func newSolveFn(p SolveParams) *solveFn {
	sp := p.Solver
	sp.Workers = chunkWorkers(sp)
	return &solveFn{Solver: sp, PoolShare: p.PoolShare, SensitiveNames: p.SensitiveNames}
}

// resolve sets Solver.Sensitive from SensitiveNames, once.
func (fn *solveFn) resolve(ctx context.Context) error {
	if fn.SensitiveNames == nil || fn.resolved {
		return nil
	}
	ids, _, err := fn.SensitiveNames.ids(ctx)
	if err != nil {
		return err
	}
	fn.Solver.Sensitive, fn.resolved = ids, true
	return nil
}

// solveCores bounds the cores a worker process's chunk solves use at
// once. A runner may hand a process many chunks in parallel bundles (prism
// runs every chunk of a job at once); each solve takes as many cores as it
// runs goroutines (Workers, every core when 0), so a process solves
// GOMAXPROCS/Workers chunks at a time: more would only add memory (a
// chunk's rows and solver state while it is solved) and contention (see
// docs/decisions/011-worker-memory.md). Counting cores rather than
// chunks keeps the bound right when one process runs pipelines with
// different Workers (prism and LOOPBACK run every pipeline of a process in
// it).
// The core count is read once: a weight above the semaphore's size would
// wait forever.
var (
	solveProcs = runtime.GOMAXPROCS(0)
	solveCores = semaphore.NewWeighted(int64(solveProcs))
)

// solveWeight is the number of cores a solve with workers goroutines
// holds.
func solveWeight(workers, procs int) int64 {
	if workers <= 0 || workers > procs {
		return int64(procs)
	}
	return int64(workers)
}

// acquireSolve waits for the cores of a solve and returns their release.
func acquireSolve(ctx context.Context, workers int) (func(), error) {
	w := solveWeight(workers, solveProcs)
	if err := solveCores.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { solveCores.Release(w) }, nil
}

// ProcessElement solves one chunk. A job of one chunk sets nothing aside,
// as a pool of one chunk is never solved again.
func (fn *solveFn) ProcessElement(ctx context.Context, chunk int64, iter func(*ChunkBlock) bool,
	emit func(OutBlock), setAside func(int64, PoolBlock), emitStat func(ChunkStat)) error {
	if err := fn.resolve(ctx); err != nil {
		return err
	}
	release, err := acquireSolve(ctx, fn.Solver.Workers)
	if err != nil {
		return err
	}
	defer release()
	m, chunks, err := gatherChunk(iter)
	if err != nil {
		return fmt.Errorf("chunk %d: %w", chunk, err)
	}
	rows := m.NumRows()
	start := time.Now()
	res, err := solver.Solve(ctx, m, fn.solverParams(ChunkSeed(fn.Solver.Seed, chunk)))
	var dup *matrix.DuplicateUserError
	if errors.As(err, &dup) {
		// Bad input, not a failed job: the report says so and the
		// launcher names the rows (release.Outcome).
		n, ids := duplicateIDs(m.Users)
		emitStat(ChunkStat{Chunk: chunk, Rows: int64(rows), DuplicateUsers: n, DuplicateIDs: ids})
		return nil
	}
	if err != nil {
		return fmt.Errorf("chunk %d (%d rows): %w", chunk, rows, err)
	}
	secs := time.Since(start).Seconds()
	rel := res.Release
	if err := checkRelease(fmt.Sprintf("chunk %d", chunk), m, rel); err != nil {
		return err
	}
	share := fn.PoolShare
	if chunks < 2 {
		share = 0
	}
	if pooled := worstServed(m, rel, res.Cluster, share); len(pooled) > 0 {
		// The last piece is one row of its own, as emitBlocks's last block.
		last := len(pooled) - 1
		for _, b := range poolBlocks(chunk, m, rel, pooled[:last]) {
			setAside(chunk, b)
		}
		b := poolBlocks(chunk, m, rel, pooled[last:])[0]
		b.In.Users[0] = strings.Clone(b.In.Users[0])
		setAside(chunk, b)
		kept := others(rows, pooled)
		km, kr := pick(m, kept), pick(rel, kept)
		m, rel = &km, &kr
	}
	emitBlocks(m, rel, emit)
	st := ChunkStat{Chunk: chunk, Rows: int64(rows), Seconds: secs}
	if res.Info != nil {
		st.Clusters = res.Info.GetClusters()
		st.FacilityCost = res.Info.GetFacilityCost()
	}
	sizes := map[int32]int64{}
	for _, c := range res.Cluster {
		sizes[c]++
	}
	for _, n := range sizes {
		st.ClusterSizes.Add(n)
	}
	if st.Clusters == 0 {
		st.Clusters = int64(len(sizes))
	}
	emitStat(st)
	solveMillis.Update(ctx, int64(secs*1000))
	chunkRowsDist.Update(ctx, int64(rows))
	chunksCounter.Inc(ctx, 1)
	rowsSolved.Inc(ctx, int64(rows))
	releaseEntries.Inc(ctx, rel.NumEntries())
	return nil
}

// duplicateIDs counts the repeated ids of users (each repeat once) and
// returns up to MaxProblems of them, sorted.
func duplicateIDs(users []string) (int64, []string) {
	sorted := slices.Clone(users)
	slices.Sort(sorted)
	var r repeats
	for _, u := range sorted {
		r.add(u)
	}
	return r.n, r.ids
}

// repeats counts the ids of a sorted sequence that equal the one before
// (each repeat once) and keeps up to MaxProblems of them.
type repeats struct {
	n    int64
	ids  []string
	prev string
	any  bool
}

func (r *repeats) add(u string) {
	if r.any && u == r.prev {
		r.n++
		if len(r.ids) < MaxProblems && (len(r.ids) == 0 || r.ids[len(r.ids)-1] != u) {
			r.ids = append(r.ids, u)
		}
	}
	r.prev, r.any = u, true
}

// solverParams are the solver's parameters for a solve seeded seed.
func (fn *solveFn) solverParams(seed int64) solver.Params {
	p := fn.Solver
	p.Seed = seed
	return p
}

// checkRelease checks that the solver released the rows of in, in order.
func checkRelease(what string, in, rel *matrix.Matrix) error {
	if rel.NumRows() != in.NumRows() {
		return fmt.Errorf("%s: solver released %d rows for %d", what, rel.NumRows(), in.NumRows())
	}
	for i := range in.Users {
		if rel.Users[i] != in.Users[i] {
			return fmt.Errorf("%s: solver row %d is not the user of input row %d", what, i, i)
		}
	}
	return nil
}

// emitBlocks emits the rows of in and their release rel as OutBlocks
// bounded by MaxBlockRows and MaxBlockEntries, sharing their arrays, but
// for the last row, which goes alone in a block of its own (ownRow).
//
// The SDK's registered emitters keep the last value they emitted, and the
// SDK keeps a stage's plan, emitters included, as long as the runner's
// bundle descriptor lives; Flink registers a descriptor per partition. A
// last block sharing in's arrays would keep the whole chunk or pool (and
// the decoded pieces its user ids point into) once per partition the
// stage has run (docs/decisions/023-worker-retention.md).
func emitBlocks(in, rel *matrix.Matrix, emit func(OutBlock)) {
	rows := in.NumRows() - 1
	for lo, hi := 0, 0; lo < rows; lo = hi {
		for hi = lo + 1; hi < rows && !full(hi-lo, int(in.Offsets[hi]-in.Offsets[lo]+rel.Offsets[hi]-rel.Offsets[lo])); hi++ {
		}
		emit(OutBlock{In: slice(in, lo, hi), Out: slice(rel, lo, hi)})
	}
	if rows >= 0 {
		b := OutBlock{In: ownRow(in, rows), Out: ownRow(rel, rows)}
		b.Out.Users = b.In.Users
		emit(b)
	}
}

// ownRow returns row i of m as a matrix of one row that shares no memory
// with m, its user id included.
func ownRow(m *matrix.Matrix, i int) matrix.Matrix {
	r := m.Row(i)
	return matrix.Matrix{Users: []string{strings.Clone(m.Users[i])}, Offsets: []int64{0, int64(len(r))}, Features: slices.Clone(r)}
}

// others lists 0..n-1 without the ascending rows.
func others(n int, rows []int) []int {
	out := make([]int, 0, n-len(rows))
	j := 0
	for i := range n {
		if j < len(rows) && rows[j] == i {
			j++
			continue
		}
		out = append(out, i)
	}
	return out
}

// gatherChunk collects a chunk's pieces into one matrix whose rows are in
// sort-key order, and returns it with the job's number of chunks, which
// every piece must state alike.
func gatherChunk(iter func(*ChunkBlock) bool) (*matrix.Matrix, int64, error) {
	type ref struct {
		key   rowKey
		block int32
		row   int32
	}
	var blocks []KeyedBlock
	var refs []ref
	var c ChunkBlock
	var chunks int64
	entries := 0
	for iter(&c) {
		b := c.Block
		h := lsh.New(b.Seed) // rows are signed eagerly: sorting copies keys
		for i := range b.Rows.Users {
			k := rowKey{lead: b.lead(i), tie: b.tie(i), user: b.Rows.Users[i], sig: h.Sign(b.Rows.Row(i)), signed: true}
			refs = append(refs, ref{key: k, block: int32(len(blocks)), row: int32(i)})
		}
		entries += len(b.Rows.Features)
		blocks = append(blocks, b)
		if len(blocks) > 1 && c.Chunks != chunks {
			return nil, 0, fmt.Errorf("pieces state %d and %d chunks in the job", chunks, c.Chunks)
		}
		chunks = c.Chunks
		c = ChunkBlock{}
	}
	slices.SortFunc(refs, func(x, y ref) int { return compareKeys(&x.key, &y.key) })
	m := matrix.New(len(refs), entries)
	for _, r := range refs {
		appendRow(m, &blocks[r.block].Rows, int(r.row))
	}
	return m, chunks, nil
}

// slice returns rows [lo, hi) of m, sharing its arrays.
func slice(m *matrix.Matrix, lo, hi int) matrix.Matrix {
	off := m.Offsets[lo : hi+1]
	if lo == 0 {
		return matrix.Matrix{Users: m.Users[:hi], Offsets: off, Features: m.Features[:off[len(off)-1]]}
	}
	out := matrix.Matrix{Users: m.Users[lo:hi], Offsets: make([]int64, len(off)), Features: m.Features[off[0]:off[len(off)-1]]}
	for i, o := range off {
		out.Offsets[i] = o - off[0]
	}
	return out
}
