package transforms

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/lsh"
)

// DefaultSamplesPerChunk is the expected number of sampled keys per chunk
// from which chunk boundaries are taken; chunk sizes then deviate from
// ChunkSize by about 1/sqrt(DefaultSamplesPerChunk) ≈ 9% (more with
// ChunkParams.CutAtGaps).
const DefaultSamplesPerChunk = 128

// ChunkParams configure Chunk.
type ChunkParams struct {
	// ChunkSize is the target number of rows per chunk. Required; >= MinRows.
	ChunkSize int64
	// MinRows is the least number of rows a chunk may hold (2k): a chunk
	// with fewer sampled rows is merged into a neighbour. Required; >= 2.
	MinRows int64
	// K is the anonymity parameter: with fewer than K rows in total every
	// stage that reads the bounds fails the job. Required; >= 2.
	K int64
	// SamplesPerChunk is the sample density for boundaries. Optional;
	// default the larger of DefaultSamplesPerChunk and 2·MinRows, so that
	// a chunk of at least half the density holds MinRows sampled rows and
	// is never merged (see Bounds.Sampled).
	SamplesPerChunk int64
	// Total is the number of input rows, when the caller knows it (from
	// the input files' footers). Optional; default 0: Chunk counts them,
	// which costs a pass over the rows.
	Total int64
	// Sharpen runs one sharpening round (see sharpen.go) on the incoming
	// order before cutting it: rows near a boundary move to the side where
	// their features' rows lie. Costs a pass over the rows, a shuffle of
	// per-bundle feature sums and a second boundary sample. Optional;
	// default false.
	Sharpen bool
	// CutAtGaps moves every boundary to the widest gap in the rows'
	// leading keys within half a chunk of its quantile (see widestGap), so
	// that chunks end where the order jumps, between communities, rather
	// than inside one; each chunk then holds between about half and one and
	// a half ChunkSize rows. Meaningful only when the leading key is a
	// coordinate (KeySpectral), not a hash. Optional; default false.
	CutAtGaps bool
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
	case p.Total < 0:
		return fmt.Errorf("chunk: total %d rows, want >= 0", p.Total)
	}
	return nil
}

// Bounds are the sorted, distinct chunk boundary keys: chunk i holds the
// keys in [Keys[i-1], Keys[i]).
type Bounds struct {
	Keys [][]byte
	// Sampled is the number of sampled rows of every chunk, len(Keys)+1
	// of them. A sampled row is a row of its chunk, so this is a lower
	// bound on the chunk's rows, exact when every row is sampled: chunks
	// are merged by it (mergeSampled) without another pass to count them.
	Sampled []int64
	// Refused, when set, says why the input has no chunks (fewer than K
	// users). Every reader of the bounds fails the job with it, so that
	// the job's error is this one whichever stage a runner fails first:
	// had the bounds stage failed alone, prism could run a reader with no
	// bounds first and report that instead.
	Refused string
}

var chunksCounter = beam.NewCounter("smoothanon", "chunks")

func init() {
	beam.RegisterCoder(reflect.TypeOf(Bounds{}), encBounds, decBounds)
	register.DoFn3x0[KeyedBlock, int, func([]byte)](&sampleFn{})
	register.Emitter1[[]byte]()
	register.DoFn4x0[[]byte, func(*[]byte) bool, int, func(Bounds)](&boundsFn{})
	register.Iter1[[]byte]()
	register.Iter1[Bounds]()
	register.DoFn3x1[KeyedBlock, func(*Bounds) bool, func(int64, ChunkBlock), error](&assignFn{})
	register.Emitter2[int64, ChunkBlock]()
	register.Function1x1(keyedRows)
	register.Function2x1(sumInts)
}

func encBounds(b Bounds) ([]byte, error) { return gobEncode(b) }
func decBounds(p []byte) (Bounds, error) {
	var b Bounds
	err := gobDecode(p, &b)
	return b, err
}

// Chunk range-partitions a PCollection<KeyedBlock> by the rows' sort keys
// into chunks of about ChunkSize rows and returns PCollection<KV<int64,
// ChunkBlock>>: for every block, one piece per chunk it has rows in, keyed
// by chunk id, each carrying the number of chunks. Beam has no global
// sort, and combiner-based approximate quantiles depend on bundle order,
// so boundaries come from a deterministic sample instead: a row is
// sampled when the hash of its user id falls under a threshold set from
// the total count; the sorted sample's every (len/chunks)-th key is a
// boundary (or the key at the widest gap near it, with CutAtGaps).
// Chunks are therefore a pure function of the set of input rows. Chunks
// with fewer than MinRows sampled rows are merged into their neighbour
// (see Bounds.Sampled); with fewer than K rows in total every stage that
// reads the bounds fails the job (with no blocks to cut, none does).
//
// Past the signature the rows are read twice, once to sample them and
// once to cut them (three more times with Sharpen), plus once to count
// them unless ChunkParams.Total is given. Every such pass matters on
// Flink, which materializes the rows between stages.
func Chunk(s beam.Scope, blocks beam.PCollection, params ChunkParams) beam.PCollection {
	s = s.Scope("Chunk")
	if err := checkChunkParams(params); err != nil {
		panic(err)
	}
	params.SamplesPerChunk = samplesPerChunk(params)
	var total beam.PCollection
	if params.Total > 0 {
		total = beam.Create(s, int(params.Total))
	} else {
		total = beam.Combine(s, sumInts, beam.ParDo(s, keyedRows, blocks))
	}
	bounds := sampleBounds(s, blocks, total, params)
	if params.Sharpen {
		blocks = sharpen(s, blocks, bounds)
		bounds = sampleBounds(s, blocks, total, params)
	}
	return beam.ParDo(s, &assignFn{MinRows: params.MinRows}, blocks, beam.SideInput{Input: bounds})
}

// samplesPerChunk is ChunkParams.SamplesPerChunk with its default.
func samplesPerChunk(p ChunkParams) int64 {
	if p.SamplesPerChunk > 0 {
		return p.SamplesPerChunk
	}
	return max(DefaultSamplesPerChunk, 2*p.MinRows)
}

func keyedRows(b KeyedBlock) int { return b.Rows.NumRows() }
func sumInts(a, b int) int       { return a + b }

// sampleBounds computes the chunk boundaries (a singleton Bounds) of the
// rows from the deterministic sample.
func sampleBounds(s beam.Scope, blocks, total beam.PCollection, params ChunkParams) beam.PCollection {
	sample := beam.ParDo(s, &sampleFn{ChunkSize: params.ChunkSize, PerChunk: params.SamplesPerChunk},
		blocks, beam.SideInput{Input: total})
	return beam.ParDo(s, &boundsFn{ChunkSize: params.ChunkSize, K: params.K, Gaps: params.CutAtGaps},
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

func (fn *sampleFn) ProcessElement(b KeyedBlock, total int, emit func([]byte)) {
	t := sampleThreshold(int64(total), fn.ChunkSize, fn.PerChunk)
	h := lsh.New(b.Seed)
	for i, u := range b.Rows.Users {
		if t == math.MaxUint64 || userHash(u) < t {
			emit(sortKey(b.lead(i), b.tie(i), h.Sign(b.Rows.Row(i)), u))
		}
	}
}

type boundsFn struct {
	ChunkSize int64 `json:"chunk_size"`
	K         int64 `json:"k"`
	Gaps      bool  `json:"gaps"`
}

func (fn *boundsFn) ProcessElement(_ []byte, sample func(*[]byte) bool, total int, emit func(Bounds)) {
	if int64(total) < fn.K {
		// About the input, not the runner: the readers report it as bad
		// input (a long-form input's users are first counted here).
		emit(Bounds{Refused: fmt.Sprintf("input has %d users, fewer than k=%d: no k-anonymous release exists", total, fn.K)})
		return
	}
	var keys [][]byte
	var k []byte
	for sample(&k) {
		keys = append(keys, k)
	}
	emit(computeBounds(keys, numChunks(int64(total), fn.ChunkSize), fn.Gaps))
}

// computeBounds sorts the sampled keys and takes every len/chunks-th one,
// or with gaps the one at the widest gap near it (see widestGap), and
// counts the sampled keys of every chunk.
func computeBounds(keys [][]byte, chunks int64, gaps bool) Bounds {
	slices.SortFunc(keys, bytes.Compare)
	var b Bounds
	n := int64(len(keys))
	prev := int64(0)
	for i := int64(1); i < chunks && n > 0; i++ {
		at := i * n / chunks
		if gaps {
			at = widestGap(keys, at, prev, n/chunks)
		}
		prev = at
		k := keys[at]
		if len(b.Keys) > 0 && bytes.Equal(b.Keys[len(b.Keys)-1], k) {
			continue
		}
		b.Keys = append(b.Keys, k)
	}
	b.Sampled = make([]int64, len(b.Keys)+1)
	c := 0 // the chunk of key: the number of boundaries at or below it
	for _, key := range keys {
		for c < len(b.Keys) && bytes.Compare(b.Keys[c], key) <= 0 {
			c++
		}
		b.Sampled[c]++
	}
	return b
}

// widestGap returns the index j of the sorted sampled key that ends the
// widest gap in the leading key, lead(j) − lead(j−1), among the j within
// per/2 of the quantile at and between per/2 and 3·per/2 after the
// previous boundary prev (per: the samples per chunk). Ties go to the j
// nearest at, then the lower; at itself when the window is empty. Rows on
// either side of a wide gap share few features, so a cut there splits
// fewer communities than a cut at the quantile (see
// docs/decisions/003-spectral-chunk-key.md).
func widestGap(keys [][]byte, at, prev, per int64) int64 {
	n := int64(len(keys))
	lo, hi := max(1, at-per/2, prev+per/2), min(n-1, at+per/2, prev+per*3/2)
	if at < 1 || lo > hi {
		return at
	}
	best, gap := at, leadGap(keys, at)
	for j := lo; j <= hi; j++ {
		if g := leadGap(keys, j); g > gap || g == gap && absDiff(j, at) < absDiff(best, at) {
			best, gap = j, g
		}
	}
	return best
}

// leadGap is the lead key of keys[j] less that of keys[j−1], for sorted
// keys.
func leadGap(keys [][]byte, j int64) uint64 { return keyPrefix(keys[j])[0] - keyPrefix(keys[j-1])[0] }

// keyPrefix is the (lead, tie) prefix of a sort key's bytes, zero-padded.
func keyPrefix(k []byte) [2]uint64 {
	var p [16]byte
	copy(p[:], k)
	return [2]uint64{binary.BigEndian.Uint64(p[:8]), binary.BigEndian.Uint64(p[8:])}
}

func absDiff(a, b int64) int64 { return max(a-b, b-a) }

// cutter finds the chunk of a row: the number of boundaries at or below
// its sort key. Most rows differ from every boundary in their (lead, tie)
// prefix, which decides; only rows that share it with a boundary need
// their signature.
type cutter struct {
	keys    [][]byte
	pre     [][2]uint64 // (lead, tie) of keys
	sampled []int64     // Bounds.Sampled
}

func newCutter(b Bounds) *cutter {
	c := &cutter{keys: b.Keys, pre: make([][2]uint64, len(b.Keys)), sampled: b.Sampled}
	for i, k := range b.Keys {
		c.pre[i] = keyPrefix(k)
	}
	return c
}

func lessPair(a, b [2]uint64) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

func (c *cutter) chunk(k *rowKey) int64 {
	p := [2]uint64{k.lead, k.tie}
	lo := sort.Search(len(c.pre), func(i int) bool { return !lessPair(c.pre[i], p) })
	hi := lo + sort.Search(len(c.pre)-lo, func(i int) bool { return lessPair(p, c.pre[lo+i]) })
	if lo == hi {
		return int64(lo)
	}
	key := k.bytes()
	return int64(lo + sort.Search(hi-lo, func(i int) bool { return bytes.Compare(c.keys[lo+i], key) > 0 }))
}

// chunksOf returns the chunk of every row of b.
func (c *cutter) chunksOf(b *KeyedBlock) []int64 {
	h := lsh.New(b.Seed)
	out := make([]int64, b.Rows.NumRows())
	for i := range out {
		k := rowKey{lead: b.lead(i), tie: b.tie(i), user: b.Rows.Users[i], features: b.Rows.Row(i), h: h}
		out[i] = c.chunk(&k)
	}
	return out
}

// readCutter reads the bounds side input once into *cache. The side input
// is taken as an iterator, read lazily in ProcessElement: a singleton
// parameter would be fetched when StartBundle runs, and the Beam 2.62
// Flink job server registers a bundle's state handler only after sending
// the bundle request, so a fetch that early can fail with "Unknown process
// bundle instruction id" (it did, at 1e7 rows with 16 partitions).
func readCutter(cache **cutter, bounds func(*Bounds) bool) error {
	if *cache != nil {
		return nil
	}
	var b Bounds
	if !bounds(&b) {
		return fmt.Errorf("chunk: no chunk bounds")
	}
	if b.Refused != "" {
		return &jobError{errors.New(b.Refused)}
	}
	*cache = newCutter(b)
	return nil
}

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

// mergeSampled is mergeChunks over the chunks' sampled rows
// (Bounds.Sampled). A chunk without sampled rows may still hold rows; it
// joins the group of the next chunk that has some, or of the last one.
func mergeSampled(sampled []int64, minRows int64) map[int64]int64 {
	sizes := map[int64]int64{}
	for c, n := range sampled {
		if n > 0 {
			sizes[int64(c)] = n
		}
	}
	merged := mergeChunks(sizes, minRows)
	to := int64(0) // the group of the last chunk with sampled rows
	for c := int64(len(sampled)) - 1; c >= 0; c-- {
		if g, ok := merged[c]; ok {
			to = g
			break
		}
	}
	for c := int64(len(sampled)) - 1; c >= 0; c-- {
		if g, ok := merged[c]; ok {
			to = g
		} else {
			merged[c] = to
		}
	}
	return merged
}

// countMerged is the number of chunks in mergeChunks' map.
func countMerged(merged map[int64]int64) int64 {
	seen := map[int64]bool{}
	for _, to := range merged {
		seen[to] = true
	}
	return int64(len(seen))
}

// assignFn splits a block into one piece per merged chunk.
type assignFn struct {
	MinRows int64 `json:"min_rows"`
	c       *cutter
	merged  map[int64]int64
	count   int64 // chunks after merging
}

func (fn *assignFn) ProcessElement(b KeyedBlock, bounds func(*Bounds) bool, emit func(int64, ChunkBlock)) error {
	if err := readCutter(&fn.c, bounds); err != nil {
		return err
	}
	if fn.merged == nil {
		fn.merged = mergeSampled(fn.c.sampled, fn.MinRows)
		fn.count = countMerged(fn.merged)
	}
	chunks := fn.c.chunksOf(&b)
	for i, c := range chunks {
		to, ok := fn.merged[c]
		if !ok {
			return fmt.Errorf("chunk %d is not in the bounds' %d chunks", c, len(fn.c.sampled))
		}
		chunks[i] = to
	}
	for to, rows := range groupRows(chunks) {
		emit(to, ChunkBlock{Block: b.subset(rows), Chunks: fn.count})
	}
	return nil
}

// groupRows lists the row numbers of every value of keys, values ascending.
func groupRows(keys []int64) func(func(int64, []int) bool) {
	return func(yield func(int64, []int) bool) {
		rows := map[int64][]int{}
		for i, k := range keys {
			rows[k] = append(rows[k], i)
		}
		for _, k := range slices.Sorted(maps.Keys(rows)) {
			if !yield(k, rows[k]) {
				return
			}
		}
	}
}
