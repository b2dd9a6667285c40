package transforms

import (
	"fmt"
	"math"
	"slices"

	"github.com/smoothanon/smoothanon/lsh"
	"github.com/smoothanon/smoothanon/matrix"
)

// SampleOrder returns the row numbers of m, rows held in memory (a sample
// of an input), in the chunking order Signature gives rows under p: each
// row's lead computed from m's rows alone (KeyHub's feature counts,
// KeySpectral's averaging rounds, KeyTwoHop's least user hash over m's
// users), then its MinHash signature and user id. The pipeline's Sharpen
// round is not run. It uses no Beam: `smoothanon assess` cuts a sample
// into chunks with it as Chunk cuts the input.
func SampleOrder(m *matrix.Matrix, p SignatureParams) ([]int, error) {
	if err := checkSignatureParams(p); err != nil {
		return nil, err
	}
	n := m.NumRows()
	seen := make(map[string]struct{}, n)
	for _, u := range m.Users {
		if _, ok := seen[u]; ok {
			return nil, fmt.Errorf("sample order: user %q twice", u)
		}
		seen[u] = struct{}{}
	}
	var lead []uint64
	switch p.Key {
	case KeyHub:
		counts := map[uint32]int64{}
		for _, f := range m.Features {
			counts[f]++
		}
		lead = leadsOver(m, func(f uint32) uint64 { return hubKey(f, counts[f]) })
	case KeyTwoHop:
		hops := map[uint32]uint64{}
		for i, u := range m.Users {
			h := hopHash(u)
			for _, f := range m.Row(i) {
				if v, ok := hops[f]; !ok || h < v {
					hops[f] = h
				}
			}
		}
		lead = leadsOver(m, func(f uint32) uint64 { return hops[f] })
	case KeySpectral:
		it := p.Iterations
		if it == 0 {
			it = DefaultSpectralIterations
		}
		lead = sampleSpectral(m, p.Seed, it)
	}
	h := lsh.New(p.Seed)
	keys := make([]rowKey, n)
	for i := range keys {
		keys[i] = rowKey{user: m.Users[i], sig: h.Sign(m.Row(i)), signed: true}
		if lead != nil {
			keys[i].lead = lead[i]
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareKeys(&keys[a], &keys[b]) })
	return order, nil
}

// leadsOver is every row's least value of its features (MaxUint64 for a
// row without features), as leadBy computes it from a side input.
func leadsOver(m *matrix.Matrix, value func(uint32) uint64) []uint64 {
	lead := make([]uint64, m.NumRows())
	for i := range lead {
		v := uint64(math.MaxUint64)
		for _, f := range m.Row(i) {
			v = min(v, value(f))
		}
		lead[i] = v
	}
	return lead
}

// sampleSpectral runs the spectral key's rounds on m's rows in memory
// (spectral.go's recurrence: rows the truncated mean of their features,
// features the truncated mean of their rows) and returns each row's lead.
func sampleSpectral(m *matrix.Matrix, seed int64, rounds int) []uint64 {
	s := spectralSeed(seed)
	x := map[uint32]int64{}
	n := map[uint32]int64{}
	for _, f := range m.Features {
		if _, ok := x[f]; !ok {
			x[f] = initCoord(s, f)
		}
		n[f]++
	}
	y := make([]int64, m.NumRows())
	sum := map[uint32]int64{}
	for round := 0; ; round++ {
		for i := range y {
			y[i], _ = rowCoord(m.Row(i), func(f uint32) (int64, error) { return x[f], nil })
		}
		if round == rounds {
			break
		}
		clear(sum)
		for i := range y {
			for _, f := range m.Row(i) {
				sum[f] += y[i]
			}
		}
		for f, t := range sum {
			x[f] = t / n[f]
		}
	}
	lead := make([]uint64, len(y))
	for i, c := range y {
		lead[i] = leadKey(c)
	}
	return lead
}

// SampleRows reads up to maxRows non-empty rows of files (sorted Parquet
// paths of the layout lay), spread over up to slots places of them as
// ChooseKey's sample is (evenly spaced files, and evenly spaced ranges of
// row groups within them). Named features are numbered by one growing
// vocabulary over the files sampled, in the order first read, which is
// returned (nil for ids).
func SampleRows(files []string, lay matrix.Layout, maxRows, slots int) ([][]uint32, *matrix.Vocab, error) {
	return sampleRows(files, lay, maxRows, slots)
}
