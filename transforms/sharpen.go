package transforms

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Sharpening (ChunkParams.Sharpen) is one more averaging round run once the
// chunk boundaries of the incoming order are known. Every row starts at the
// index c of its chunk; every feature takes the mean of its rows' indices;
// every row then takes the mean of its features' values v, clamped to
// [c-1, c+1], and the order becomes (that value, the old lead key, ...).
// Re-cut at the same quantiles, a row near a boundary moves to the side
// where most of its features' rows lie, while the clamp keeps a row with
// popular features (held in many chunks) from being pulled across the
// whole order. This brings the chunked release's Jaccard closer to a
// whole-data solve's, with few chunks and with many, where an unclamped
// round loses (see docs/decisions/003-spectral-chunk-key.md).
//
// Values are integers (chunk index × scale, |v| < 2^29), so sums are exact
// and the order is the same on every runner.

// maxSharpenChunks bounds the chunk count so that chunk indices fit the
// value range with at least 2 units per chunk.
const maxSharpenChunks = 1 << (coordBits - 3)

// sharpenScale is the fixed-point unit of one chunk for chunks chunks.
func sharpenScale(chunks int) (int64, error) {
	if chunks > maxSharpenChunks {
		return 0, fmt.Errorf("sharpen: %d chunks, at most %d: use a larger chunk size", chunks, maxSharpenChunks)
	}
	return (1<<(coordBits-1) - 1) / int64(max(chunks, 1)), nil
}

func init() {
	register.DoFn3x1[KeyedBlock, func(*Bounds) bool, func(int64, featBlock), error](&chunkSumsFn{})
	register.DoFn4x1[KeyedBlock, func(*Bounds) bool, func(*int64, *featBlock) bool, func(KeyedBlock), error](&sharpenFn{})
}

// chunkSumsFn sums, per feature, the chunk index of the rows holding it
// (per bundle, in blocks; see bundleSums).
type chunkSumsFn struct {
	sums bundleSums
	c    *cutter
}

// StartBundle: see spectralFirstFn.StartBundle.
func (fn *chunkSumsFn) StartBundle(_ func(*Bounds) bool, _ func(int64, featBlock)) {
	fn.sums = newBundleSums()
}

func (fn *chunkSumsFn) ProcessElement(b KeyedBlock, bounds func(*Bounds) bool, _ func(int64, featBlock)) error {
	scale, err := readSharpenCutter(&fn.c, bounds)
	if err != nil {
		return err
	}
	for i, c := range fn.c.chunksOf(&b) {
		fn.sums.add(b.Rows.Row(i), c*scale)
	}
	return nil
}

func (fn *chunkSumsFn) FinishBundle(_ func(*Bounds) bool, emit func(int64, featBlock)) {
	fn.sums.flush(emit)
}

// readSharpenCutter reads the bounds (readCutter) and returns their scale.
func readSharpenCutter(cache **cutter, bounds func(*Bounds) bool) (int64, error) {
	if err := readCutter(cache, bounds); err != nil {
		return 0, fmt.Errorf("sharpen: %w", err)
	}
	return sharpenScale(len((*cache).keys) + 1)
}

// sharpenFn gives each row its sharpened lead key.
type sharpenFn struct {
	c  *cutter
	fx *table[int32]
}

func (fn *sharpenFn) ProcessElement(b KeyedBlock, bounds func(*Bounds) bool, fx func(*int64, *featBlock) bool, emit func(KeyedBlock)) error {
	scale, err := readSharpenCutter(&fn.c, bounds)
	if err != nil {
		return err
	}
	lead := make([]uint64, b.Rows.NumRows())
	for i, c := range fn.c.chunksOf(&b) {
		own := c * scale
		v := own
		if row := b.Rows.Row(i); len(row) > 0 {
			if v, err = coordOfRow(&fn.fx, b.Rows.Users[i], row, fx); err != nil {
				return fmt.Errorf("sharpen: %w", err)
			}
		}
		lead[i] = leadKey(own + max(-scale, min(scale, v-own)))
	}
	emit(KeyedBlock{Rows: b.Rows, Lead: lead, Tie: b.Lead, Seed: b.Seed})
	return nil
}

func (fn *sharpenFn) FinishBundle(_ func(*Bounds) bool, _ func(*int64, *featBlock) bool, _ func(KeyedBlock)) {
	fn.fx = nil
}

// sharpen returns the blocks with sharpened keys, given the boundaries of
// their current order.
func sharpen(s beam.Scope, blocks, bounds beam.PCollection) beam.PCollection {
	s = s.Scope("Sharpen")
	sums := beam.CombinePerKey(s, mergeBlocks, beam.ParDo(s, &chunkSumsFn{}, blocks, beam.SideInput{Input: bounds}))
	return beam.ParDo(s, &sharpenFn{}, blocks, beam.SideInput{Input: bounds}, beam.SideInput{Input: sums})
}
