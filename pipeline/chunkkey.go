package pipeline

import (
	"slices"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/transforms"
)

// resolveKey replaces transforms.KeyAuto in p.Key by the key
// transforms.ChooseKey picks for files, and returns the evidence for the
// run report (nil when the key was given).
func resolveKey(p *Params, files []string) (*smoothanonpb.ChunkKeyAuto, error) {
	if p.Key != transforms.KeyAuto {
		return nil, nil
	}
	c, err := transforms.ChooseKey(slices.Sorted(slices.Values(files)), p.Seed)
	if err != nil {
		return nil, err
	}
	p.Key = c.Key
	return &smoothanonpb.ChunkKeyAuto{SampleRows: c.SampleRows, TopShare: c.TopShare}, nil
}
