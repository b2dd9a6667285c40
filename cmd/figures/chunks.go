package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/smoothanon/smoothanon/internal/experiment"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// The chunk sweep's data set, k and seed.
const (
	pipelineSet  = "dblp"
	pipelineK    = 8
	pipelineSeed = 1
)

// chunkSweep is the pipeline's Jaccard on dblp (smooth, k = pipelineK, the
// prism runner) at each chunk size, and the whole-data solve's.
type chunkSweep struct {
	ChunkSizes []int     `json:"chunk_sizes"`
	Chunks     []int64   `json:"chunks"`
	Jaccard    []float64 `json:"jaccard"`
	Seconds    []float64 `json:"seconds"`
	Whole      float64   `json:"whole_jaccard"`
}

// sweepChunks runs dblp through the pipeline at every chunk size of p and
// checks each published release with verify.Check against the input; nil
// when dblp is absent. The whole-data Jaccard is the smooth curve's at
// k = pipelineK when sets measured it, else solved here.
func sweepChunks(src experiment.Source, p params, sets []setResult, log io.Writer) (*chunkSweep, error) {
	missing, err := src.Missing(pipelineSet)
	if err != nil || missing != "" {
		if missing != "" {
			fmt.Fprintf(log, "figures: skipping the chunk sweep: %s not found\n", missing)
		}
		return nil, err
	}
	m, err := src.Load(pipelineSet, pipelineSeed)
	if err != nil {
		return nil, err
	}
	sw := &chunkSweep{ChunkSizes: p.chunks}
	if sw.Whole, err = wholeJaccard(m, sets); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "figures-chunks-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	input := filepath.Join(dir, "input.parquet")
	if err := matrix.WriteMatrix(input, m, matrix.WriterOptions{}); err != nil {
		return nil, err
	}
	for _, cs := range p.chunks {
		out := filepath.Join(dir, fmt.Sprintf("release-%d", cs))
		start := time.Now()
		res, err := pipeline.Run(context.Background(), pipeline.Params{Input: input, Output: out,
			Solver: solver.Params{K: pipelineK, Seed: pipelineSeed}, ChunkSize: int64(cs), PoolShare: pipeline.DefaultPoolShare})
		if err != nil {
			return nil, fmt.Errorf("pipeline on %s, chunk size %d: %w", pipelineSet, cs, err)
		}
		sec := time.Since(start).Seconds()
		j, err := checkRelease(m, out)
		if err != nil {
			return nil, fmt.Errorf("pipeline on %s, chunk size %d: %w", pipelineSet, cs, err)
		}
		fmt.Fprintf(log, "%s pipeline chunk size %d: %d chunks, jaccard %.4f (whole %.4f), %.0fs\n",
			pipelineSet, cs, res.Report.Pipeline.Chunks, j, sw.Whole, sec)
		sw.Chunks = append(sw.Chunks, res.Report.Pipeline.Chunks)
		sw.Jaccard = append(sw.Jaccard, j)
		sw.Seconds = append(sw.Seconds, sec)
		os.RemoveAll(out)
	}
	return sw, nil
}

// checkRelease reads the release directory and returns its Jaccard after
// verify.Check found it a valid smooth pipelineK-anonymous release of in.
func checkRelease(in *matrix.Matrix, dir string) (float64, error) {
	out, _, err := matrix.ReadMatrix(dir, matrix.ReadOptions{})
	if err != nil {
		return 0, err
	}
	rep, err := verify.Check(in, out, verify.Params{K: pipelineK, Mode: matrix.Smooth})
	if err != nil {
		return 0, err
	}
	if !rep.Valid {
		return 0, &experiment.InvalidError{Method: "pipeline", Problems: rep.Problems}
	}
	return rep.Jaccard, nil
}

// wholeJaccard is the whole-data smooth Jaccard of m at pipelineK: from
// the measured curves when they hold it, else a verified solve.
func wholeJaccard(m *matrix.Matrix, sets []setResult) (float64, error) {
	for _, s := range sets {
		if s.Name != pipelineSet {
			continue
		}
		for i, k := range s.Ks {
			if k == pipelineK {
				return s.Curves[0].Mean[i], nil
			}
		}
	}
	o, err := experiment.Solve(context.Background(), m, solver.Params{K: pipelineK, Mode: matrix.Smooth, Seed: pipelineSeed})
	if err != nil {
		return 0, err
	}
	return o.Report.Jaccard, nil
}
