package transforms

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// A chunk's solve sees only the chunk's rows. Pools give the users it
// served worst a second chance among more users: every chunk sets aside its
// worst-served clusters (lowest Jaccard first) until they hold
// SolveParams.PoolShare of its rows, and the set-aside clusters of
// round(1/share) neighbouring chunks (in key order) are solved again
// together. A pool's new release replaces the first only when it is better
// for any release it is part of (see raises), so pools never lower the
// Jaccard, and the first release stays valid as it is: pooled clusters are
// whole clusters, each at least k users and its own majority.

// MinPoolShare and MaxPoolShare bound SolveParams.PoolShare (0 is off): a
// pool holds the set-aside rows of round(1/share) chunks (one more when a
// chunk would be left alone), about one chunk's worth of rows.
const (
	MinPoolShare = 0.01
	MaxPoolShare = 0.5
)

// CheckPoolShare reports a share that is neither 0 nor within
// [MinPoolShare, MaxPoolShare].
func CheckPoolShare(share float64) error {
	if share == 0 || share >= MinPoolShare && share <= MaxPoolShare {
		return nil
	}
	return fmt.Errorf("pool share %g, want 0 (no pools) or %g..%g", share, MinPoolShare, MaxPoolShare)
}

// chunksPerPool is how many neighbouring chunks one pool gathers.
func chunksPerPool(share float64) int64 { return max(2, int64(math.Round(1/share))) }

// poolOf is the pool of the chunk of rank rank (0-based, in key order)
// among chunks chunks: perPool neighbours each, and a last chunk that
// would be alone joins the pool before it, so that no pool holds a lone
// chunk unless the job has one, nor more than perPool+1 chunks.
func poolOf(rank, chunks, perPool int64) int64 {
	p := rank / perPool
	if chunks > 1 && chunks%perPool == 1 && p == chunks/perPool {
		p--
	}
	return p
}

// PoolBlock is a block of set-aside rows of one chunk: the users, their
// input features and their first release. Rows of a cluster share their
// release, so each distinct released row is stored once (Releases) and
// row i's is Releases row Release[i].
type PoolBlock struct {
	Chunk    int64
	In       matrix.Matrix
	Releases matrix.Matrix // rows only; Users is nil
	Release  []int32
}

// PoolStat describes one pool's solve. Before and After are the pool's
// utility under its first and its kept release.
type PoolStat struct {
	Pool, Rows, Chunks int64
	Improved           bool
	Seconds            float64
	Before, After      edits
}

// edits is the utility of a set of rows: input entries, kept entries and
// created entries (suppressed = In − Kept).
type edits struct{ In, Kept, Created int64 }

func (e edits) suppressed() int64 { return e.In - e.Kept }

// jaccard is Kept/(In+Created), 1 for no entries at all.
func (e edits) jaccard() float64 {
	if e.In+e.Created == 0 {
		return 1
	}
	return float64(e.Kept) / float64(e.In+e.Created)
}

// add counts one row, its input and its released features.
func (e *edits) add(in, out []uint32) {
	k := int64(verify.CountCommon(in, out))
	e.In += int64(len(in))
	e.Kept += k
	e.Created += int64(len(out)) - k
}

// measure returns the edits of every row of (in, out).
func measure(in, out *matrix.Matrix) edits {
	var e edits
	for i := range in.Users {
		e.add(in.Row(i), out.Row(i))
	}
	return e
}

// raises reports whether replacing release a of some rows by release b
// raises the Jaccard of every release that holds them: b suppresses no
// more entries and changes fewer in all (Δs ≤ 0, Δs + Δc < 0), so
// Δs + J·Δc < 0 for every Jaccard J in (0, 1] of the whole, which is
// exactly when (E − S − Δs)/(E + C + Δc) > (E − S)/(E + C).
func raises(a, b edits) bool {
	ds := b.suppressed() - a.suppressed()
	dc := b.Created - a.Created
	return ds <= 0 && ds+dc < 0
}

// worstServed returns the rows of the clusters with the lowest Jaccard
// (ties: the lower cluster number), ascending: whole clusters, taken until
// they hold at least share of the rows, passing over a cluster that would
// take them past twice the share. A cluster of no entries in or out is
// served perfectly (Jaccard 1).
func worstServed(in, out *matrix.Matrix, cluster []int32, share float64) []int {
	if share <= 0 || len(cluster) == 0 {
		return nil
	}
	type acc struct {
		edits
		rows int
	}
	per := map[int32]*acc{}
	var ids []int32
	for i, c := range cluster {
		a := per[c]
		if a == nil {
			a = &acc{}
			per[c] = a
			ids = append(ids, c)
		}
		a.add(in.Row(i), out.Row(i))
		a.rows++
	}
	slices.SortFunc(ids, func(a, b int32) int {
		if c := cmp.Compare(per[a].jaccard(), per[b].jaccard()); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	want := share * float64(len(cluster))
	take, n := map[int32]bool{}, 0
	for _, c := range ids {
		if float64(n) >= want {
			break
		}
		if float64(n+per[c].rows) > 2*want {
			continue
		}
		take[c] = true
		n += per[c].rows
	}
	if n == 0 {
		return nil
	}
	rows := make([]int, 0, n)
	for i, c := range cluster {
		if take[c] {
			rows = append(rows, i)
		}
	}
	return rows
}

// poolBlocks cuts rows (of in and its release out) into PoolBlocks of
// chunk, each storing a distinct released row once.
func poolBlocks(chunk int64, in, out *matrix.Matrix, rows []int) []PoolBlock {
	var blocks []PoolBlock
	for lo := 0; lo < len(rows); {
		b := PoolBlock{Chunk: chunk, In: emptyMatrix(), Releases: emptyMatrix()}
		seen := map[uint64][]int32{} // row hash → indexes into Releases
		entries := 0
		for ; lo < len(rows) && !full(len(b.Release), entries); lo++ {
			i := rows[lo]
			appendRow(&b.In, in, i)
			r := out.Row(i)
			idx := int32(-1)
			h := matrix.HashRow(r)
			for _, j := range seen[h] {
				if slices.Equal(b.Releases.Row(int(j)), r) {
					idx = j
					break
				}
			}
			if idx < 0 {
				idx = int32(len(b.Releases.Offsets) - 1)
				b.Releases.Features = append(b.Releases.Features, r...)
				b.Releases.Offsets = append(b.Releases.Offsets, int64(len(b.Releases.Features)))
				seen[h] = append(seen[h], idx)
				entries += len(r)
			}
			b.Release = append(b.Release, idx)
			entries += len(in.Row(i))
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// PoolParams configure Pool: the solver's parameters (as Solve's) and the
// share of each chunk's rows that was set aside.
type PoolParams struct {
	// Solve is the configuration of the chunks' solves; its PoolShare is
	// the share set aside. Required; PoolShare > 0.
	Solve SolveParams
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(PoolBlock{}), encPoolBlock, decPoolBlock)
	beam.RegisterCoder(reflect.TypeOf(PoolStat{}), encPoolStat, decPoolStat)
	register.DoFn4x1[int64, PoolBlock, func(*ChunkStat) bool, func(int64, PoolBlock), error](&poolKeyFn{})
	register.DoFn5x1[context.Context, int64, func(*PoolBlock) bool, func(OutBlock), func(PoolStat), error](&poolFn{})
	register.Iter1[PoolBlock]()
	register.Iter1[ChunkStat]()
	register.Emitter1[PoolStat]()
	register.Emitter2[int64, PoolBlock]()
	register.Function1x1(poolStats)
}

// Pool solves the set-aside rows of Solve again, pooled: released, setAside
// and chunks are Solve's three outputs, the released rows
// PCollection<OutBlock>, the rows set aside PCollection<KV<int64,
// PoolBlock>> (keyed by chunk) and PCollection<ChunkStat>, which numbers
// the chunks. It returns the release of every row, PCollection<OutBlock>:
// released and the pooled rows' releases; and one Stats per pool. A
// pool's rows are sorted by user before solving and its seed is mixed
// from (Seed, pool), so its release is a pure function of the run. A pool
// of one chunk, or one naming a user twice, keeps its first release.
func Pool(s beam.Scope, released, setAside, chunks beam.PCollection, params PoolParams) (rows, stats beam.PCollection) {
	s = s.Scope("Pool")
	if err := CheckSolveParams(params.Solve); err != nil {
		panic(fmt.Errorf("pool: %w", err))
	}
	if params.Solve.PoolShare <= 0 {
		panic(fmt.Errorf("pool: pool share %g, want > 0", params.Solve.PoolShare))
	}
	keyed := beam.ParDo(s, &poolKeyFn{PerPool: chunksPerPool(params.Solve.PoolShare)}, setAside, beam.SideInput{Input: chunks})
	// A chunk's set-aside rows leave one solve; without the reshuffle,
	// Flink's batch grouping makes them one sort record of a partition.
	grouped := beam.GroupByKey(s, beam.Reshuffle(s, keyed))
	fn := newSolveFn(params.Solve)
	fn.PoolShare = 0 // a pool sets nothing aside
	pooled, pools := beam.ParDo2(s, &poolFn{*fn}, grouped)
	return beam.Flatten(s, released, pooled), beam.ParDo(s, poolStats, pools)
}

// poolKeyFn keys set-aside pieces by pool: chunks are ranked by id (ids
// follow the key order, with gaps where small chunks merged).
type poolKeyFn struct {
	PerPool int64 `json:"per_pool"`
	ranks   map[int64]int64
}

func (fn *poolKeyFn) ProcessElement(chunk int64, b PoolBlock, chunks func(*ChunkStat) bool, emit func(int64, PoolBlock)) error {
	if fn.ranks == nil {
		var ids []int64
		var st ChunkStat
		for chunks(&st) {
			ids = append(ids, st.Chunk)
		}
		slices.Sort(ids)
		fn.ranks = make(map[int64]int64, len(ids))
		for r, id := range ids {
			fn.ranks[id] = int64(r)
		}
	}
	r, ok := fn.ranks[chunk]
	if !ok {
		return fmt.Errorf("pool: chunk %d was not solved", chunk)
	}
	emit(poolOf(r, int64(len(fn.ranks)), fn.PerPool), b)
	return nil
}

var (
	poolRowsCounter      = beam.NewCounter("smoothanon", "pool_rows")
	poolsImprovedCounter = beam.NewCounter("smoothanon", "pools_improved")
)

// poolFn solves a pool: the solver's parameters are Solve's.
type poolFn struct {
	solveFn
}

// PoolSeed is the solver seed of pool p in a run with seed; it differs
// from every chunk's (ChunkSeed of a non-negative chunk).
func PoolSeed(seed, pool int64) int64 { return ChunkSeed(seed, ^pool) }

// ProcessElement takes its cores before it gathers the pool, as Solve
// does, so a worker running many bundles holds as many gathered pools as
// it solves at once, not one per bundle.
func (fn *poolFn) ProcessElement(ctx context.Context, pool int64, iter func(*PoolBlock) bool, emit func(OutBlock), emitStat func(PoolStat)) error {
	if err := fn.resolve(ctx); err != nil {
		return err
	}
	release, err := acquireSolve(ctx, fn.Solver.Workers)
	if err != nil {
		return err
	}
	in, first, chunks := gatherPool(iter)
	st := PoolStat{Pool: pool, Rows: int64(in.NumRows()), Chunks: chunks}
	st.Before = measure(in, first)
	st.After = st.Before
	rel := first
	if chunks > 1 && !repeatsUser(in) {
		start := time.Now()
		res, err := solver.Solve(ctx, in, fn.solverParams(PoolSeed(fn.Solver.Seed, pool)))
		release()
		if err != nil {
			return fmt.Errorf("pool %d (%d rows from %d chunks): %w", pool, in.NumRows(), chunks, err)
		}
		st.Seconds = time.Since(start).Seconds()
		if err := checkRelease(fmt.Sprintf("pool %d", pool), in, res.Release); err != nil {
			return err
		}
		if after := measure(in, res.Release); raises(st.Before, after) {
			rel, st.After, st.Improved = res.Release, after, true
			poolsImprovedCounter.Inc(ctx, 1)
		}
	} else {
		release()
	}
	emitBlocks(in, rel, emit)
	emitStat(st)
	poolRowsCounter.Inc(ctx, st.Rows)
	releaseEntries.Inc(ctx, rel.NumEntries())
	return nil
}

// gatherPool collects a pool's pieces into its rows sorted by user and
// their first release, and counts the chunks they came from.
func gatherPool(iter func(*PoolBlock) bool) (in, first *matrix.Matrix, chunks int64) {
	type ref struct{ block, row int32 }
	var blocks []PoolBlock
	var refs []ref
	var b PoolBlock
	seen := map[int64]bool{}
	entries := 0
	for iter(&b) {
		for i := range b.In.Users {
			refs = append(refs, ref{int32(len(blocks)), int32(i)})
		}
		entries += len(b.In.Features)
		seen[b.Chunk] = true
		blocks = append(blocks, b)
		b = PoolBlock{}
	}
	user := func(r ref) string { return blocks[r.block].In.Users[r.row] }
	slices.SortFunc(refs, func(x, y ref) int {
		if c := strings.Compare(user(x), user(y)); c != 0 {
			return c
		}
		// Equal users (a repeated id) in a fixed order all the same.
		bx, by := &blocks[x.block], &blocks[y.block]
		if c := cmp.Compare(bx.Chunk, by.Chunk); c != 0 {
			return c
		}
		return slices.Compare(bx.In.Row(int(x.row)), by.In.Row(int(y.row)))
	})
	in, first = matrix.New(len(refs), entries), matrix.New(len(refs), entries)
	for _, r := range refs {
		pb := &blocks[r.block]
		appendRow(in, &pb.In, int(r.row))
		first.Append(pb.In.Users[r.row], pb.Releases.Row(int(pb.Release[r.row])))
	}
	return in, first, int64(len(seen))
}

// repeatsUser reports whether m, sorted by user, names a user twice.
func repeatsUser(m *matrix.Matrix) bool {
	for i := 1; i < len(m.Users); i++ {
		if m.Users[i] == m.Users[i-1] {
			return true
		}
	}
	return false
}

func poolStats(p PoolStat) Stats {
	st := Stats{Pools: 1, PoolRows: p.Rows, PoolSeconds: p.Seconds,
		PoolKeptGain: p.After.Kept - p.Before.Kept, PoolCreatedGain: p.After.Created - p.Before.Created}
	if p.Improved {
		st.PoolsImproved = 1
	}
	return st
}

func encPoolStat(p PoolStat) ([]byte, error) { return gobEncode(p) }
func decPoolStat(b []byte) (PoolStat, error) {
	var p PoolStat
	err := gobDecode(b, &p)
	return p, err
}

func encPoolBlock(b PoolBlock) []byte {
	e := enc{b: make([]byte, 0, 8*len(b.In.Users)+2*len(b.In.Features)+2*len(b.Releases.Features)+3*len(b.Release)+16)}
	e.uvarint(uint64(b.Chunk))
	e.users(b.In.Users)
	e.rows(&b.In)
	e.uvarint(uint64(len(b.Releases.Offsets) - 1))
	e.rows(&b.Releases)
	for _, r := range b.Release {
		e.uvarint(uint64(r))
	}
	return e.b
}

func decPoolBlock(p []byte) (PoolBlock, error) {
	d := dec{b: p}
	b := PoolBlock{Chunk: int64(d.uvarint())}
	b.In.Users = d.users()
	b.In.Offsets, b.In.Features = d.rows(len(b.In.Users))
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errShort
	}
	b.Releases.Offsets, b.Releases.Features = d.rows(int(n))
	b.Release = make([]int32, 0, len(b.In.Users))
	for range b.In.Users {
		r := d.uvarint()
		if d.err == nil && r >= n {
			d.err = fmt.Errorf("release %d of a block of %d", r, n)
		}
		b.Release = append(b.Release, int32(r))
	}
	return b, d.done("pool block")
}

// SetAside is the rows of one chunk's release that Solve sets aside for
// its pool under share (the worst-served clusters; none when share is 0),
// for callers that run the stages in memory (`smoothanon assess`).
func SetAside(in, out *matrix.Matrix, cluster []int32, share float64) []int {
	return worstServed(in, out, cluster, share)
}

// PoolOfChunk is the pool that chunk rank (0-based, in key order) of
// chunks joins under share (share > 0).
func PoolOfChunk(rank, chunks int64, share float64) int64 {
	return poolOf(rank, chunks, chunksPerPool(share))
}
