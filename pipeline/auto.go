package pipeline

import (
	"slices"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

// resolveAuto makes the automatic choices of p from one sample of files
// (transforms.ChooseKey): transforms.KeyAuto in p.Key becomes the key
// ChooseKey picks, and AutoStart becomes a Start (see Params.AutoStart).
// It returns the sample's evidence for the run report, nil when nothing
// was automatic.
func resolveAuto(p *Params, files []string) (*smoothanonpb.ChunkKeyAuto, error) {
	if p.AutoStart && p.Variant != solver.Improved {
		p.Start, p.AutoStart = solver.StartBoth, false // the paper's variant has one start
	}
	if p.Key != transforms.KeyAuto && !p.AutoStart {
		return nil, nil // nothing the sample could change: no read
	}
	c, err := transforms.ChooseKey(slices.Sorted(slices.Values(files)), p.Seed)
	if err != nil {
		return nil, err
	}
	if p.Key == transforms.KeyAuto {
		p.Key = c.Key
	}
	if p.AutoStart {
		p.Start, p.AutoStart = solver.StartBoth, false
		if c.Key == transforms.KeyHub {
			p.Start = solver.StartMondrian
		}
	}
	return &smoothanonpb.ChunkKeyAuto{SampleRows: c.SampleRows, TopShare: c.TopShare}, nil
}
