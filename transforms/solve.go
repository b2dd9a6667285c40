package transforms

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/lsh"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
)

// SolveParams configure Solve.
type SolveParams struct {
	// K is the anonymity parameter. Required; >= 2.
	K int
	// Mode is smooth or nonsmooth. Optional; default matrix.Smooth.
	Mode matrix.Mode
	// Seed is the run seed; chunk c is solved with a seed mixed from
	// (Seed, c), so a retried chunk reproduces its release. Optional.
	Seed int64
	// Beta and Restarts are passed to the solver. Optional; solver defaults.
	Beta, Restarts int
	// Variant is the solver variant. Optional; default solver.Improved.
	Variant solver.Variant
	// Search is the solver's neighbour search. Optional; default
	// solver.Bounded.
	Search solver.Search
	// Workers is the solver's parallelism per chunk. Optional; 0 = GOMAXPROCS.
	Workers int
}

func checkSolveParams(p SolveParams) error {
	sp := solver.Params{K: p.K, Mode: p.Mode, Beta: p.Beta, Restarts: p.Restarts, Variant: p.Variant, Search: p.Search, Workers: p.Workers}
	if p.Workers < 0 {
		return fmt.Errorf("solve: workers %d, want >= 0", p.Workers)
	}
	return solver.CheckParams(sp, p.K)
}

// ChunkStat describes the solve of one chunk.
type ChunkStat struct {
	Chunk        int64
	Rows         int64
	Clusters     int64
	ClusterSizes Dist
	Seconds      float64
	FacilityCost float64
}

var (
	solveMillis    = beam.NewDistribution("smoothanon", "solve_ms")
	chunkRowsDist  = beam.NewDistribution("smoothanon", "chunk_rows")
	rowsSolved     = beam.NewCounter("smoothanon", "rows_solved")
	releaseEntries = beam.NewCounter("smoothanon", "entries_out")
)

func init() {
	beam.RegisterCoder(reflect.TypeOf(ChunkStat{}), encChunkStat, decChunkStat)
	register.DoFn5x1[context.Context, int64, func(*SigRow) bool, func(OutRow), func(ChunkStat), error](&solveFn{})
	register.Iter1[SigRow]()
	register.Emitter1[OutRow]()
	register.Emitter1[ChunkStat]()
}

func encChunkStat(c ChunkStat) ([]byte, error) { return gobEncode(c) }
func decChunkStat(p []byte) (ChunkStat, error) {
	var c ChunkStat
	err := gobDecode(p, &c)
	return c, err
}

// Solve runs solver.Solve on every chunk of a PCollection<KV<int64,
// SigRow>> (from Chunk). It returns the released rows,
// PCollection<OutRow>, and one ChunkStat per chunk. Rows of a chunk are
// sorted by SortKey before solving, so the result does not depend on the
// order the shuffle delivered them in.
func Solve(s beam.Scope, chunks beam.PCollection, params SolveParams) (rows, stats beam.PCollection) {
	s = s.Scope("Solve")
	if err := checkSolveParams(params); err != nil {
		panic(err)
	}
	grouped := beam.GroupByKey(s, chunks)
	return beam.ParDo2(s, &solveFn{K: params.K, Mode: int(params.Mode), Seed: params.Seed, Beta: params.Beta,
		Restarts: params.Restarts, Variant: int(params.Variant), Search: int(params.Search), Workers: params.Workers}, grouped)
}

// ChunkSeed is the solver seed of chunk c in a run with seed.
func ChunkSeed(seed, chunk int64) int64 {
	return int64(lsh.Mix64(uint64(seed)^0x5851F42D4C957F2D) ^ lsh.Mix64(uint64(chunk)+0x14057B7EF767814F))
}

type solveFn struct {
	K        int   `json:"k"`
	Mode     int   `json:"mode"`
	Seed     int64 `json:"seed"`
	Beta     int   `json:"beta"`
	Restarts int   `json:"restarts"`
	Variant  int   `json:"variant"`
	Search   int   `json:"search"`
	Workers  int   `json:"workers"`
}

func (fn *solveFn) ProcessElement(ctx context.Context, chunk int64, iter func(*SigRow) bool, emit func(OutRow), emitStat func(ChunkStat)) error {
	var rows []SigRow
	var r SigRow
	for iter(&r) {
		rows = append(rows, r)
		r = SigRow{}
	}
	slices.SortFunc(rows, compareSigRows)
	entries := 0
	for i := range rows {
		entries += len(rows[i].Row.Features)
	}
	m := matrix.New(len(rows), entries)
	for i := range rows {
		m.Users = append(m.Users, rows[i].Row.User)
		m.Features = append(m.Features, rows[i].Row.Features...)
		m.Offsets = append(m.Offsets, int64(len(m.Features)))
	}
	start := time.Now()
	res, err := solver.Solve(ctx, m, solver.Params{K: fn.K, Mode: matrix.Mode(fn.Mode), Seed: ChunkSeed(fn.Seed, chunk),
		Beta: fn.Beta, Restarts: fn.Restarts, Variant: solver.Variant(fn.Variant),
		Search: solver.Search(fn.Search), Workers: fn.Workers})
	if err != nil {
		return fmt.Errorf("chunk %d (%d rows): %w", chunk, len(rows), err)
	}
	secs := time.Since(start).Seconds()
	rel := res.Release
	if rel.NumRows() != m.NumRows() {
		return fmt.Errorf("chunk %d: solver released %d rows for %d", chunk, rel.NumRows(), m.NumRows())
	}
	var out int64
	for i := range m.Users {
		if rel.Users[i] != m.Users[i] {
			return fmt.Errorf("chunk %d: solver row %d is user %q, want %q", chunk, i, rel.Users[i], m.Users[i])
		}
		emit(OutRow{User: m.Users[i], In: m.Row(i), Out: slices.Clone(rel.Row(i))})
		out += int64(len(rel.Row(i)))
	}
	st := ChunkStat{Chunk: chunk, Rows: int64(len(rows)), Seconds: secs}
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
	chunkRowsDist.Update(ctx, int64(len(rows)))
	chunksCounter.Inc(ctx, 1)
	rowsSolved.Inc(ctx, int64(len(rows)))
	releaseEntries.Inc(ctx, out)
	return nil
}
