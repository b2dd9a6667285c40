package pipeline

import (
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"
)

// TestSolvesReadNoSideInput: the DoFns that run for minutes, a chunk's
// solve and a pool's, take their main input only. On prism a stage that
// reads a side input is rescheduled in a busy loop for as long as one of
// its bundles runs (docs/pipeline.md, "Side inputs on prism"): one of the
// two cores of this machine spun through every solve when the chunk count
// was a side input of Solve.
func TestSolvesReadNoSideInput(t *testing.T) {
	p := Params{Input: "in.parquet", Output: "out", RunID: "run", K: 4, ChunkSize: 100, PoolShare: DefaultPoolShare}
	edges, _, err := Build(p, []string{"in.parquet"}, "staging").Build()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, e := range edges {
		if e.Op != graph.ParDo {
			continue
		}
		for _, fn := range []string{"solveFn", "poolFn"} {
			if !strings.HasSuffix(e.DoFn.Name(), "."+fn) {
				continue
			}
			found[fn] = true
			if len(e.Input) != 1 {
				t.Errorf("%s reads %d inputs, want its main input only", e.DoFn.Name(), len(e.Input))
			}
		}
	}
	if !found["solveFn"] || !found["poolFn"] {
		t.Fatalf("solve and pool DoFns not found in the graph: %v", found)
	}
}
