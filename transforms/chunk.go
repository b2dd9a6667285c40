package transforms

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/smoothanon/smoothanon/lsh"
)

// DefaultSamplesPerChunk is the expected number of sampled keys per chunk
// from which chunk boundaries are taken; chunk sizes then deviate from
// ChunkSize by about 1/sqrt(DefaultSamplesPerChunk) ≈ 9%.
const DefaultSamplesPerChunk = 128

// ChunkParams configure Chunk.
type ChunkParams struct {
	// ChunkSize is the target number of rows per chunk. Required; >= MinRows.
	ChunkSize int64
	// MinRows is the least number of rows a chunk may hold (2k); smaller
	// chunks are merged into a neighbour. Required; >= 2.
	MinRows int64
	// K is the anonymity parameter: fewer than K rows in total is an error.
	// Required; >= 2.
	K int64
	// SamplesPerChunk is the sample density for boundaries. Optional;
	// default DefaultSamplesPerChunk.
	SamplesPerChunk int64
	// Sharpen runs one sharpening round (see sharpen.go) on the incoming
	// order before cutting it: rows near a boundary move to the side where
	// their features' rows lie. Costs a pass over the rows, a shuffle of
	// per-bundle feature sums and a second boundary sample. Optional;
	// default false.
	Sharpen bool
}

func checkChunkParams(p ChunkParams) error {
	switch {
	case p.K < 2:
		return fmt.Errorf("chunk: k=%d, want >= 2", p.K)
	case p.MinRows < p.K:
		return fmt.Errorf("chunk: min rows %d below k=%d", p.MinRows, p.K)
	case p.ChunkSize < p.MinRows:
		return fmt.Errorf("chunk: chunk size %d below the minimum chunk of %d rows (2k)", p.ChunkSize, p.MinRows)
	case p.SamplesPerChunk < 0:
		return fmt.Errorf("chunk: samples per chunk %d, want >= 0", p.SamplesPerChunk)
	}
	return nil
}

// Bounds are the sorted, distinct chunk boundary keys: chunk i holds the
// keys in [Keys[i-1], Keys[i]).
type Bounds struct {
	Keys [][]byte
}

// ChunkSizes is the row count of every non-empty chunk before merging.
type ChunkSizes struct {
	Total int64
	Sizes map[int64]int64
}

var chunksCounter = beam.NewCounter("smoothanon", "chunks")

func init() {
	beam.RegisterCoder(reflect.TypeOf(Bounds{}), encBounds, decBounds)
	register.DoFn3x0[SigRow, int, func([]byte)](&sampleFn{})
	register.Emitter1[[]byte]()
	register.DoFn4x1[[]byte, func(*[]byte) bool, int, func(Bounds), error](&boundsFn{})
	register.Iter1[[]byte]()
	register.Function3x0(assignChunk)
	register.Emitter2[int64, SigRow]()
	register.Function2x2(chunkOne)
	register.Emitter2[int64, int64]()
	register.DoFn5x1[int64, SigRow, func(*int64, *int64) bool, int, func(int64, SigRow), error](&mergeFn{})
	register.Iter2[int64, int64]()
}

func encBounds(b Bounds) ([]byte, error) { return gobEncode(b) }
func decBounds(p []byte) (Bounds, error) {
	var b Bounds
	err := gobDecode(p, &b)
	return b, err
}

// Chunk range-partitions a PCollection<SigRow> by SortKey into chunks of
// about ChunkSize rows and returns PCollection<KV<int64, SigRow>> keyed by
// chunk id. Beam has no global sort, and combiner-based approximate
// quantiles depend on bundle order, so boundaries come from a deterministic
// sample instead: a row is sampled when the hash of its user id falls under
// a threshold set from the total count; the sorted sample's every
// (len/chunks)-th key is a boundary. Chunks are therefore a pure function of
// the set of input rows. Chunks with fewer than MinRows rows are merged into
// their neighbour; fewer than K rows in total fails the job.
func Chunk(s beam.Scope, rows beam.PCollection, params ChunkParams) beam.PCollection {
	s = s.Scope("Chunk")
	if err := checkChunkParams(params); err != nil {
		panic(err)
	}
	if params.SamplesPerChunk == 0 {
		params.SamplesPerChunk = DefaultSamplesPerChunk
	}
	total := stats.CountElms(s, rows)
	bounds := sampleBounds(s, rows, total, params)
	if params.Sharpen {
		rows = sharpen(s, rows, bounds)
		bounds = sampleBounds(s, rows, total, params)
	}
	keyed := beam.ParDo(s, assignChunk, rows, beam.SideInput{Input: bounds})
	sizes := stats.SumPerKey(s, beam.ParDo(s, chunkOne, keyed))
	return beam.ParDo(s, &mergeFn{MinRows: params.MinRows}, keyed,
		beam.SideInput{Input: sizes}, beam.SideInput{Input: total})
}

// sampleBounds computes the chunk boundaries (a singleton Bounds) of rows
// from the deterministic sample.
func sampleBounds(s beam.Scope, rows, total beam.PCollection, params ChunkParams) beam.PCollection {
	sample := beam.ParDo(s, &sampleFn{ChunkSize: params.ChunkSize, PerChunk: params.SamplesPerChunk},
		rows, beam.SideInput{Input: total})
	return beam.ParDo(s, &boundsFn{ChunkSize: params.ChunkSize, K: params.K},
		beam.Impulse(s), beam.SideInput{Input: sample}, beam.SideInput{Input: total})
}

// numChunks is the number of chunks for total rows: total/chunkSize
// rounded down, at least 1, so chunks average at least chunkSize rows.
func numChunks(total, chunkSize int64) int64 {
	return max(1, total/chunkSize)
}

// sampleThreshold is the hash threshold under which a row is sampled:
// about perChunk rows per chunk, every row when that is all of them.
func sampleThreshold(total, chunkSize, perChunk int64) uint64 {
	want := numChunks(total, chunkSize) * perChunk
	if total <= 0 || want >= total {
		return math.MaxUint64
	}
	hi, lo := bits.Mul64(uint64(want), math.MaxUint64)
	q, _ := bits.Div64(hi, lo, uint64(total))
	return q
}

// userHash is the sampling hash of a user id (FNV-1a then a mixer); it does
// not depend on the seed, so the sample only depends on the input set.
func userHash(user string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(user); i++ {
		h ^= uint64(user[i])
		h *= 1099511628211
	}
	return lsh.Mix64(h)
}

type sampleFn struct {
	ChunkSize int64 `json:"chunk_size"`
	PerChunk  int64 `json:"per_chunk"`
}

func (fn *sampleFn) ProcessElement(r SigRow, total int, emit func([]byte)) {
	t := sampleThreshold(int64(total), fn.ChunkSize, fn.PerChunk)
	if t == math.MaxUint64 || userHash(r.Row.User) < t {
		emit(r.SortKey())
	}
}

type boundsFn struct {
	ChunkSize int64 `json:"chunk_size"`
	K         int64 `json:"k"`
}

func (fn *boundsFn) ProcessElement(_ []byte, sample func(*[]byte) bool, total int, emit func(Bounds)) error {
	if int64(total) < fn.K {
		return fmt.Errorf("input has %d rows, fewer than k=%d: no k-anonymous release exists", total, fn.K)
	}
	var keys [][]byte
	var k []byte
	for sample(&k) {
		keys = append(keys, k)
	}
	emit(computeBounds(keys, numChunks(int64(total), fn.ChunkSize)))
	return nil
}

// computeBounds sorts the sampled keys and takes every len/chunks-th one.
func computeBounds(keys [][]byte, chunks int64) Bounds {
	slices.SortFunc(keys, bytes.Compare)
	var b Bounds
	n := int64(len(keys))
	for i := int64(1); i < chunks && n > 0; i++ {
		k := keys[i*n/chunks]
		if len(b.Keys) > 0 && bytes.Equal(b.Keys[len(b.Keys)-1], k) {
			continue
		}
		b.Keys = append(b.Keys, k)
	}
	return b
}

// chunkOf is the chunk of key: the number of boundaries <= key.
func chunkOf(b Bounds, key []byte) int64 {
	return int64(sort.Search(len(b.Keys), func(i int) bool { return bytes.Compare(b.Keys[i], key) > 0 }))
}

func assignChunk(r SigRow, b Bounds, emit func(int64, SigRow)) {
	emit(chunkOf(b, r.SortKey()), r)
}

func chunkOne(c int64, _ SigRow) (int64, int64) { return c, 1 }

// mergeChunks maps every chunk id to the id of its merged chunk: walking
// chunks in order, it groups neighbours until a group holds minRows rows; a
// short last group joins the one before it.
func mergeChunks(sizes map[int64]int64, minRows int64) map[int64]int64 {
	ids := make([]int64, 0, len(sizes))
	for c := range sizes {
		ids = append(ids, c)
	}
	slices.Sort(ids)
	out := make(map[int64]int64, len(ids))
	var groups [][]int64
	var cur []int64
	var n int64
	for _, c := range ids {
		cur = append(cur, c)
		n += sizes[c]
		if n >= minRows {
			groups = append(groups, cur)
			cur, n = nil, 0
		}
	}
	if len(cur) > 0 {
		if len(groups) > 0 {
			groups[len(groups)-1] = append(groups[len(groups)-1], cur...)
		} else {
			groups = append(groups, cur)
		}
	}
	for _, g := range groups {
		for _, c := range g {
			out[c] = g[0]
		}
	}
	return out
}

type mergeFn struct {
	MinRows int64 `json:"min_rows"`
	merged  map[int64]int64
}

func (fn *mergeFn) ProcessElement(c int64, r SigRow, sizes func(*int64, *int64) bool, _ int, emit func(int64, SigRow)) error {
	if fn.merged == nil {
		m := map[int64]int64{}
		var id, n int64
		for sizes(&id, &n) {
			m[id] = n
		}
		fn.merged = mergeChunks(m, fn.MinRows)
	}
	to, ok := fn.merged[c]
	if !ok {
		return fmt.Errorf("chunk %d has no size", c)
	}
	emit(to, r)
	return nil
}
