package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/solver"
)

// Run anonymizes a Parquet input with the Beam pipeline on prism, Beam's
// runner in this process, and publishes the release only if it verified.
// Here 600 users of a generated graph of 20 communities are solved in
// chunks of about 150 rows; the worst-served 40% of every chunk's rows
// are solved again together in a pool.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "smoothanon-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	m, err := gen.SBM(gen.SBMParams{N: 600, S: 30, Q: 0.5, P: 0.005, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	input := filepath.Join(dir, "in.parquet")
	if err := matrix.WriteMatrix(input, m, matrix.WriterOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	res, err := pipeline.Run(context.Background(), pipeline.Params{
		Input:     input,
		Output:    filepath.Join(dir, "release"),
		Solver:    solver.Params{K: 4, Seed: 1}, // every chunk's solve
		ChunkSize: 150,
		PoolShare: pipeline.DefaultPoolShare,
		Runner:    "prism",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := res.Report
	fmt.Printf("rows %d, chunks %d, pools %d: valid=%v published=%v\n",
		r.Rows, r.GetPipeline().GetChunks(), r.GetPipeline().GetPool().GetPools(), r.Valid, r.Published)
	fmt.Printf("smallest class %d (k = %d), Jaccard %.2f\n", r.MinClass, r.K, r.Jaccard)
	// Output:
	// rows 600, chunks 4, pools 1: valid=true published=true
	// smallest class 4 (k = 4), Jaccard 0.54
}
