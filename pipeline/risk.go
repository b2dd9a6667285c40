package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/transforms"
)

// RiskParams configure Risk.
type RiskParams struct {
	// Input and Layout are the input, as Params.Input and Params.Layout.
	// Input is required.
	Input  string
	Layout matrix.Layout
	// Ks are the k to count the rows below. Required: each at least 2.
	Ks []int
	// Scratch is a directory, local or a gs:// or s3:// URI, where the job
	// writes its result (and the vocabulary of named features) in a
	// directory of its own, removed when Risk returns. Every worker must
	// reach it: on a cluster, a bucket. Required.
	Scratch string
	// Runner, Endpoint, EnvironmentType and ConnectTimeout choose the
	// runner, as in Params. Optional; default prism.
	Runner                    string
	Endpoint, EnvironmentType string
	ConnectTimeout            time.Duration
}

// RiskResult is the exact risk of every row of the input.
type RiskResult struct {
	transforms.RiskCounts
	// Names are the names of Exposing's features, for an input of named
	// features (matrix.Values.Named); nil otherwise.
	Names []string
	// Seconds is the job's wall time.
	Seconds float64
}

// Risk runs a job over every row of in that counts the risk assess
// reports (transforms.Risk) exactly, on p's runner, and returns it. in is
// what Inspect said of p.Input.
func Risk(ctx context.Context, p RiskParams, in Input) (*RiskResult, error) {
	if p.Input == "" || p.Scratch == "" || len(p.Ks) == 0 {
		return nil, fmt.Errorf("pipeline.Risk: want Input, Scratch and Ks, got %q, %q, %v", p.Input, p.Scratch, p.Ks)
	}
	if err := CheckRunner(p.Runner, p.Endpoint); err != nil {
		return nil, &InputError{Err: err}
	}
	if p.Runner == "" {
		p.Runner = "prism"
	}
	dir := storage.Join(p.Scratch, ".smoothanon-risk-"+randomID())
	if storage.IsLocal(dir) {
		if err := storage.MkdirAll(dir); err != nil {
			return nil, &InputError{Err: fmt.Errorf("scratch directory %s: %w", p.Scratch, err)}
		}
	}
	defer storage.RemoveAll(context.WithoutCancel(ctx), dir)
	result := storage.Join(dir, "risk.json")
	vocabPath := storage.Join(dir, "vocab.bin")
	run := Params{Input: p.Input, Layout: in.Layout, Runner: p.Runner, Endpoint: p.Endpoint,
		EnvironmentType: p.EnvironmentType, ConnectTimeout: p.ConnectTimeout}
	if run.ConnectTimeout == 0 {
		run.ConnectTimeout = DefaultConnectTimeout
	}
	build := func() *beam.Pipeline {
		pl, s := beam.NewPipelineWithRoot()
		var vocab string
		if in.Layout.Values.Named() {
			vocab = vocabPath
		}
		rows := readRows(s, in, vocab)
		transforms.Risk(s, rows, transforms.RiskParams{Ks: p.Ks, Path: result, Shards: transforms.RiskShards(in.Rows)})
		return pl
	}
	ran, secs, err := launch(ctx, run, in, build, &Result{})
	if err != nil {
		return nil, err
	}
	if !ran {
		return nil, errors.New("the risk job did not run (--dry_run?)")
	}
	b, err := storage.ReadFile(ctx, result)
	if err != nil {
		return nil, fmt.Errorf("the risk job finished without its result (is --scratch reachable from every worker?): %w", err)
	}
	r := &RiskResult{Seconds: secs}
	if err := json.Unmarshal(b, &r.RiskCounts); err != nil {
		return nil, fmt.Errorf("the risk job's result %s: %w", result, err)
	}
	if in.Layout.Values.Named() {
		v, err := matrix.ReadVocabFile(ctx, vocabPath)
		if err != nil {
			return nil, fmt.Errorf("the risk job finished without its vocabulary: %w", err)
		}
		for _, f := range r.Exposing {
			r.Names = append(r.Names, v.Name(f.Feature))
		}
	}
	return r, nil
}
