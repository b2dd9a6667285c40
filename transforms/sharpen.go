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
// whole order. On dblp this brings the pipeline's Jaccard closer to a
// whole-data solve's, with few chunks and with many, where an unclamped
// round loses (docs/performance.md).
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
	register.DoFn3x1[SigRow, func(*Bounds) bool, func(int64, featBlock), error](&chunkSumsFn{})
	register.Iter1[Bounds]()
	register.DoFn4x1[SigRow, Bounds, func(*int64, *featBlock) bool, func(SigRow), error](&sharpenFn{})
}

// chunkSumsFn sums, per feature, the chunk index of the rows holding it
// (per bundle, in blocks; see bundleSums).
//
// The bounds side input is taken as an iterator, read lazily in
// ProcessElement: a singleton parameter would be fetched when StartBundle
// runs, and the Beam 2.62 Flink job server registers a bundle's state
// handler only after sending the bundle request, so a fetch that early can
// fail with "Unknown process bundle instruction id" (it did, at 1e7 rows
// with 16 partitions).
type chunkSumsFn struct {
	sums   bundleSums
	bounds *Bounds
	scale  int64 // sharpenScale of bounds
}

// StartBundle: see spectralFirstFn.StartBundle.
func (fn *chunkSumsFn) StartBundle(_ func(*Bounds) bool, _ func(int64, featBlock)) {
	fn.sums = bundleSums{}
}

func (fn *chunkSumsFn) ProcessElement(r SigRow, bounds func(*Bounds) bool, _ func(int64, featBlock)) error {
	if fn.bounds == nil {
		var b Bounds
		if !bounds(&b) {
			return fmt.Errorf("sharpen: no chunk bounds")
		}
		scale, err := sharpenScale(len(b.Keys) + 1)
		if err != nil {
			return err
		}
		fn.bounds, fn.scale = &b, scale
	}
	fn.sums.add(r.Row.Features, chunkOf(*fn.bounds, r.SortKey())*fn.scale)
	return nil
}

func (fn *chunkSumsFn) FinishBundle(_ func(*Bounds) bool, emit func(int64, featBlock)) {
	fn.sums.flush(emit)
}

// sharpenFn gives each row its sharpened lead key.
type sharpenFn struct {
	c *coords
}

func (fn *sharpenFn) ProcessElement(r SigRow, b Bounds, fx func(*int64, *featBlock) bool, emit func(SigRow)) error {
	scale, err := sharpenScale(len(b.Keys) + 1)
	if err != nil {
		return err
	}
	own := chunkOf(b, r.SortKey()) * scale
	v := own
	if len(r.Row.Features) > 0 {
		if v, err = coordOfRow(&fn.c, r.Row, fx); err != nil {
			return fmt.Errorf("sharpen: %w", err)
		}
	}
	v = own + max(-scale, min(scale, v-own))
	emit(SigRow{Lead: leadKey(v), Tie: r.Lead, Sig: r.Sig, Row: r.Row})
	return nil
}

// sharpen returns the rows with sharpened keys, given the boundaries of
// their current order.
func sharpen(s beam.Scope, rows, bounds beam.PCollection) beam.PCollection {
	s = s.Scope("Sharpen")
	sums := beam.CombinePerKey(s, mergeBlocks, beam.ParDo(s, &chunkSumsFn{}, rows, beam.SideInput{Input: bounds}))
	return beam.ParDo(s, &sharpenFn{}, rows, beam.SideInput{Input: bounds}, beam.SideInput{Input: sums})
}
