package pipeline

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
)

// DryRun builds the pipeline for p without running it and writes the Beam
// pipeline proto (the portable job graph a runner would receive) to w as
// text, preceded by a one-line summary. It reads the input footers (and,
// with --chunk_key auto or --start auto, a sample of up to 65,536 rows) and touches no
// output.
func DryRun(ctx context.Context, p Params, w io.Writer) error {
	if err := CheckParams(p); err != nil {
		return &InputError{err}
	}
	noteDirect(p)
	p = withDefaults(p)
	if p.PseudonymKey != nil {
		// The printed graph must not carry the release's key.
		p.PseudonymKey = &pseudonym.Placeholder
	}
	in, err := Inspect(p.Input, p.Layout)
	if err != nil {
		return &InputError{err}
	}
	if p, err = withSensitive(p, in); err != nil {
		return &InputError{err}
	}
	auto, err := resolveAuto(&p, in)
	if err != nil {
		return &InputError{err}
	}
	plan := fmt.Sprintf("chunk key %s%s, start %s%s", p.Key, autoMark(auto.Key), p.Solver.Start, autoMark(auto.Start))
	if e := auto.Evidence; e != nil {
		plan += fmt.Sprintf(" (sample: %.3f of the spectral coordinate's variance on 1%% of %d rows)", e.TopShare, e.SampleRows)
	}
	if p.PoolShare > 0 {
		plan += fmt.Sprintf(", pools of %g of every chunk", p.PoolShare)
	}
	if p.RunID == "" {
		p.RunID = "dryrun"
	}
	out, err := filepath.Abs(p.Output) // no MkdirAll: a dry run touches no output
	if !storage.IsLocal(p.Output) {
		out, err = outputPath(p.Output)
	}
	if err != nil {
		return &InputError{err}
	}
	p.Output = out
	if !beam.Initialized() {
		beam.Init()
	}
	dir, base := storage.Split(out)
	staging := storage.Join(dir, "."+base+".staging-dryrun")
	edges, _, err := Build(p, in, staging).Build()
	if err != nil {
		return err
	}
	env, err := graphx.CreateEnvironment(ctx, jobopts.GetEnvironmentUrn(ctx), jobopts.GetEnvironmentConfig)
	if err != nil {
		return err
	}
	model, err := graphx.Marshal(edges, &graphx.Options{Environment: env})
	if err != nil {
		return err
	}
	names := make([]string, 0, len(model.GetComponents().GetTransforms()))
	for _, t := range model.GetComponents().GetTransforms() {
		names = append(names, t.GetUniqueName())
	}
	sort.Strings(names)
	size := fmt.Sprintf("%d rows, ~%d chunks", in.Rows, max(1, in.Rows/p.ChunkSize))
	if in.long() {
		size = fmt.Sprintf("%d pairs, chunks from the users the job groups", in.Rows)
	}
	fmt.Fprintf(w, "# dry run: %d input files, %s, %s, %d transforms, runner %s, input %s\n",
		len(in.Files), size, plan, len(names), p.Runner, in.layout())
	_, err = io.WriteString(w, prototext.Format(model))
	return err
}

// autoMark marks a choice the sample made.
func autoMark(auto bool) string {
	if auto {
		return " (auto)"
	}
	return ""
}
