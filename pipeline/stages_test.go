package pipeline

import (
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"

	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

// TestSolvesReadNoSideInput: the DoFns that run longest, a chunk's solve
// and a pool's, read their main input only, and so does every ParDo that
// prism could fuse into their stage. On prism a stage that reads a side
// input is rescheduled in a busy loop for as long as one of its bundles
// runs (docs/pipeline.md, "Side inputs on prism"): one of this machine's
// two cores spun through every solve when the chunk count was a side
// input of Solve.
func TestSolvesReadNoSideInput(t *testing.T) {
	for _, share := range []float64{0, DefaultPoolShare} {
		p := Params{Input: "in.parquet", Output: "out", RunID: "run", Solver: solver.Params{K: 4}, ChunkSize: 100, PoolShare: share}
		edges, _, err := Build(p, Input{Files: []string{"in.parquet"}, Rows: 1000, FeatureValues: 5000}, "staging").Build()
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, e := range solveStages(edges) {
			found[doFnName(e)] = true
			if len(e.Input) != 1 {
				t.Errorf("pool share %g: %s reads %d inputs in a solve's stage, want its main input only", share, e.DoFn.Name(), len(e.Input))
			}
		}
		if !found["solveFn"] || found["poolFn"] != (share > 0) {
			t.Errorf("pool share %g: the solves' stages hold %v", share, found)
		}
		// Write's grouping runs where the releases are made (through the
		// Flatten of chunk and pool releases, which solveStages does not
		// follow); with a side input it would read them back (on Flink,
		// from disk) once more.
		for _, e := range edges {
			if e.Op == graph.ParDo && doFnName(e) == "groupKeyFn" && len(e.Input) != 1 {
				t.Errorf("pool share %g: Write's grouping reads %d inputs, want its main input only", share, len(e.Input))
			}
		}
		if share == 0 && !found["groupKeyFn"] {
			t.Errorf("Write's grouping is not in the solves' stages %v", found)
		}
	}
}

// doFnName is a ParDo's DoFn name without its package path.
func doFnName(e *graph.MultiEdge) string {
	return e.DoFn.Name()[strings.LastIndex(e.DoFn.Name(), ".")+1:]
}

// solveStages returns the solve and pool ParDos and every ParDo that prism
// may fuse into their stages: one reading, as its main input, the output
// of one already in, unless one of its side inputs is computed from the
// solves' output (prism does not fuse a ParDo with the producer of its
// side input). Flatten and GroupByKey end a stage.
func solveStages(edges []*graph.MultiEdge) []*graph.MultiEdge {
	isSolve := func(e *graph.MultiEdge) bool {
		if e.Op != graph.ParDo {
			return false
		}
		name := e.DoFn.Name()
		return strings.HasSuffix(name, ".solveFn") || strings.HasSuffix(name, ".poolFn")
	}
	// after: nodes computed from a solve's output.
	after := map[int]bool{}
	for changed := true; changed; {
		changed = false
		for _, e := range edges {
			from := isSolve(e)
			for _, in := range e.Input {
				from = from || after[in.From.ID()]
			}
			for _, out := range e.Output {
				if from && !after[out.To.ID()] {
					after[out.To.ID()], changed = true, true
				}
			}
		}
	}
	var stage []*graph.MultiEdge
	inStage := map[*graph.MultiEdge]bool{}
	outOf := map[int]bool{} // outputs of the ParDos in stage
	for changed := true; changed; {
		changed = false
		for _, e := range edges {
			if e.Op != graph.ParDo || inStage[e] {
				continue
			}
			fused := isSolve(e) || len(e.Input) > 0 && outOf[e.Input[0].From.ID()]
			for _, side := range e.Input[min(1, len(e.Input)):] {
				fused = fused && (isSolve(e) || !after[side.From.ID()])
			}
			if !fused {
				continue
			}
			stage, inStage[e], changed = append(stage, e), true, true
			for _, out := range e.Output {
				outOf[out.To.ID()] = true
			}
		}
	}
	return stage
}

// TestKeyedRowPasses: past the chunk key, the rows are read by as few
// ParDos as the chunking needs — the boundary sample and the cut, plus two
// for the sharpening round with the spectral key. Flink materializes the
// rows between stages and every ParDo that reads them as its main input
// reads them again: counting them (the total is in the footers) or
// counting every chunk's rows (Bounds.Sampled) cost two passes more.
func TestKeyedRowPasses(t *testing.T) {
	for key, want := range map[transforms.Key]int{transforms.KeyHub: 2, transforms.KeyMinHash: 2,
		transforms.KeyTwoHop: 2, transforms.KeySpectral: 5} {
		p := Params{Input: "in.parquet", Output: "out", RunID: "run",
			Solver: solver.Params{K: 4}, ChunkSize: 100, Key: key, PoolShare: DefaultPoolShare}
		edges, _, err := Build(p, Input{Files: []string{"in.parquet"}, Rows: 1000, FeatureValues: 5000}, "staging").Build()
		if err != nil {
			t.Fatal(err)
		}
		keyed := map[int]bool{} // the collections of keyed rows
		for _, e := range edges {
			if e.Op != graph.ParDo {
				continue
			}
			name := doFnName(e)
			if strings.HasPrefix(name, "sign") || name == "sharpenFn" {
				keyed[e.Output[0].To.ID()] = true
			}
		}
		var readers []string
		for _, e := range edges {
			if e.Op == graph.ParDo && keyed[e.Input[0].From.ID()] {
				readers = append(readers, doFnName(e))
			}
		}
		if len(keyed) == 0 || len(readers) != want {
			t.Errorf("key %s: the keyed rows are read by %v, want %d ParDos", key, readers, want)
		}
	}
}
