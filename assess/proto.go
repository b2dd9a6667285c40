package assess

import "github.com/smoothanon/smoothanon/proto/smoothanonpb"

// Proto is r as the assessment's message.
func (r Risk) Proto() *smoothanonpb.AssessRisk {
	m := &smoothanonpb.AssessRisk{Rows: r.Rows, Entries: r.Entries, Features: r.Features, Degrees: r.Degrees, Unique: r.Unique}
	for _, b := range r.BelowK {
		m.BelowK = append(m.BelowK, &smoothanonpb.KShare{K: int32(b.K), Share: b.Share})
	}
	for _, f := range r.Exposing {
		m.Exposing = append(m.Exposing, &smoothanonpb.ExposingFeature{Feature: f.Feature, Rows: f.Rows, Name: f.Name})
	}
	return m
}

// Proto is p as the assessment's message.
func (p Point) Proto() *smoothanonpb.PricePoint {
	return &smoothanonpb.PricePoint{K: int32(p.K), Mode: p.ModeName,
		Predicted: p.Predicted.proto(), Low: p.Low.proto(), High: p.High.proto(),
		Chunks: p.Chunks, SampleChunks: p.SampleChunks, SampleChunkRows: p.SampleChunkRows,
		Extrapolated: p.Extrapolated, Model: p.Model, Backtest: p.Backtest.proto(), Noise: p.Noise.proto()}
}

func (f Figures) proto() *smoothanonpb.PriceFigures {
	return &smoothanonpb.PriceFigures{Jaccard: f.Jaccard, Suppressed: f.Suppressed, Created: f.Created, ClassRows: f.ClassRows}
}
