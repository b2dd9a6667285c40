package pipeline

import (
	"fmt"
	"slices"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

// ParseStart parses a start choice: "auto" (Params.AutoStart) or a
// solver.Start ("both", "mondrian").
func ParseStart(s string) (start solver.Start, auto bool, err error) {
	if s == "auto" {
		return solver.StartBoth, true, nil
	}
	if start, err = solver.ParseStart(s); err != nil {
		return 0, false, fmt.Errorf("invalid start %q (want auto, both or mondrian)", s)
	}
	return start, false, nil
}

// autoChoices says what resolveAuto chose from the sample.
type autoChoices struct {
	Key, Start bool                       // the sample chose p.Key, p.Start
	Evidence   *smoothanonpb.ChunkKeyAuto // for the run report; nil when nothing was sampled
}

// resolveAuto makes the automatic choices of p from one sample of in's files
// (transforms.ChooseKey): transforms.KeyAuto in p.Key becomes the key
// ChooseKey picks, and AutoStart becomes a Start (see Params.AutoStart).
func resolveAuto(p *Params, in Input) (autoChoices, error) {
	if p.AutoStart && p.Solver.Variant != solver.Improved {
		p.Solver.Start, p.AutoStart = solver.StartBoth, false // the paper's variant has one start
	}
	a := autoChoices{Key: p.Key == transforms.KeyAuto, Start: p.AutoStart}
	if !a.Key && !a.Start {
		return a, nil // nothing the sample could change: no read
	}
	c, err := transforms.ChooseKey(slices.Sorted(slices.Values(in.Files)), in.layout(), p.Solver.Seed)
	if err != nil {
		return a, err
	}
	if a.Key {
		p.Key = c.Key
	}
	if a.Start {
		p.Solver.Start, p.AutoStart = solver.StartBoth, false
		if c.Key == transforms.KeyHub {
			p.Solver.Start = solver.StartMondrian
		}
	}
	a.Evidence = &smoothanonpb.ChunkKeyAuto{SampleRows: c.SampleRows, TopShare: c.TopShare}
	return a, nil
}

// ResolveAuto makes the automatic choices of p for in as Run makes them
// (a --chunk_key auto and --start auto resolved from one sample of the
// input's files), so that a caller who predicts a run (`smoothanon
// assess`) uses the key and start the run will.
func ResolveAuto(p *Params, in Input) error {
	_, err := resolveAuto(p, in)
	return err
}
