package transforms

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/verify"
)

// AccountingParams configure Accounting.
type AccountingParams struct {
	// Table is where the job writes the full per-feature table
	// (verify.WriteFeatureTable), in the run's staging
	// (release.StagedFeatureTable). Optional; default "" writes none.
	Table string
	// Vocab is the staged vocabulary of named features (WriteParams.Vocab):
	// the table names them. Optional; default ids.
	Vocab string
	// Sensitive is the release's sensitive rule: the table marks its
	// features (verify.FeatureTableOptions.Sensitive). Optional; default
	// none.
	Sensitive *SensitiveRule
}

// featCounts holds the per-feature counts of some features of one block
// of 2^blockBits feature ids, sorted by feature id: input entries
// holding the feature, release entries showing it, and those kept (in a
// release row whose input row holds it).
type featCounts struct {
	Feats                []uint32
	Held, Released, Kept []int64
}

// maxAccountRows bounds the rows a bundle counts before it emits its
// counts: a count per bundle stays below 2^32.
const maxAccountRows = 1 << 31

func init() {
	beam.RegisterCoder(reflect.TypeOf(featCounts{}), encFeatCounts, decFeatCounts)
	beam.RegisterCoder(reflect.TypeOf(featAcc{}), encFeatAcc, decFeatAcc)
	register.DoFn2x0[OutBlock, func(int64, featCounts)](&accountFn{})
	register.Emitter2[int64, featCounts]()
	register.Iter2[int64, featCounts]()
	register.Combiner3[featAcc, featCounts, featCounts](&featCombineFn{})
	register.DoFn3x1[int64, featCounts, func(Stats), error](&summarizeFeaturesFn{})
	register.DoFn4x1[context.Context, []byte, func(*int64, *featCounts) bool, func(Stats), error](&featureTableFn{})
}

// Accounting counts every feature of the release against its input
// (verify.FeatureCount) from a PCollection<OutBlock>, each released row
// with its input row, and returns a PCollection<Stats> whose Features
// summarize them (verify.FeatureSummary; merge with CombineStats). With
// Table it also writes the full table there, one line per feature in id
// order, before its Stats are emitted.
//
// Held, Released and Kept of a feature are summed over rows as Verify
// sums the totals, so over all features they are Verify's EntriesIn,
// EntriesOut and Kept. The counts cross the shuffle keyed by blocks of
// 4,096 feature ids (like the spectral sums) and merge by addition, so
// the result is the same whatever the bundling. What each worker holds is
// bounded by the features, never by the rows: a bundle's counts (12 bytes
// per feature id up to the largest it met below 2^22, a map entry per
// feature above), a merged block of at most 4,096 features, and a
// summary of fixed size (verify.FeatureListSize features per list). The
// table's writer, the one exception, holds every feature's counts and
// line (about 60 bytes per feature) in one worker, and only with Table.
func Accounting(s beam.Scope, blocks beam.PCollection, params AccountingParams) beam.PCollection {
	s = s.Scope("Accounting")
	counts := beam.ParDo(s, &accountFn{}, blocks)
	merged := beam.CombinePerKey(s, &featCombineFn{}, counts)
	stats := beam.ParDo(s, &summarizeFeaturesFn{}, merged)
	if params.Table == "" {
		return stats
	}
	table := beam.ParDo(s, &featureTableFn{Path: params.Table, Vocab: params.Vocab, Sensitive: params.Sensitive}, beam.Impulse(s), beam.SideInput{Input: merged})
	return beam.Flatten(s, stats, table)
}

// accountFn counts a bundle's rows per feature; FinishBundle emits the
// counts and empties them.
type accountFn struct {
	acc  bundleCounts
	rows int64
}

func (fn *accountFn) ProcessElement(b OutBlock, emit func(int64, featCounts)) {
	for i := range b.In.Users {
		in, out := b.In.Row(i), b.Out.Row(i)
		for _, f := range in {
			fn.acc.at(f)[0]++
		}
		x := 0
		for _, f := range out {
			c := fn.acc.at(f)
			c[1]++
			for x < len(in) && in[x] < f {
				x++
			}
			if x < len(in) && in[x] == f {
				c[2]++
			}
		}
	}
	if fn.rows += int64(len(b.In.Users)); fn.rows >= maxAccountRows {
		fn.flush(emit)
	}
}

func (fn *accountFn) FinishBundle(emit func(int64, featCounts)) {
	fn.flush(emit)
}

// flush emits the counts in blocks of 2^blockBits feature ids and empties
// them.
func (fn *accountFn) flush(emit func(int64, featCounts)) {
	var b featCounts
	blk := int64(-1)
	fn.acc.each(func(f uint32, v [3]uint32) {
		if k := int64(f >> blockBits); k != blk {
			if blk >= 0 {
				emit(blk, b)
			}
			blk, b = k, featCounts{}
		}
		b.Feats = append(b.Feats, f)
		b.Held, b.Released, b.Kept = append(b.Held, int64(v[0])), append(b.Released, int64(v[1])), append(b.Kept, int64(v[2]))
	})
	if blk >= 0 {
		emit(blk, b)
	}
	fn.rows = 0
}

// bundleCounts holds (held, released, kept) per feature: in an array
// indexed by id below denseFeatures, zeroed where it was touched and
// handed on to the process's next bundle through denseCounts (so a
// bundle's cost follows its entries, not the largest id), and in a map
// above.
type bundleCounts struct {
	dense   [][3]uint32
	touched []uint32 // ids of dense counts that are not zero
	sparse  map[uint32]*[3]uint32
}

// denseCounts holds the zeroed dense arrays of counts whose bundle has
// emitted them, for the next bundle of any accountFn in the process. The
// array cannot stay in its DoFn: the SDK keeps a stage's DoFns, each in a
// plan of its own, as long as the runner's bundle descriptor lives, and
// Flink registers a descriptor per partition, so a stage of many
// partitions would keep an array per partition it has run
// (docs/decisions/023-worker-retention.md). The pool holds about one per
// bundle running at once, and the collector frees those no bundle takes.
var denseCounts sync.Pool

// at returns feature f's counts; the pointer is good until the next call.
func (c *bundleCounts) at(f uint32) *[3]uint32 {
	if f >= denseFeatures {
		if c.sparse == nil {
			c.sparse = map[uint32]*[3]uint32{}
		}
		v := c.sparse[f]
		if v == nil {
			v = new([3]uint32)
			c.sparse[f] = v
		}
		return v
	}
	if c.dense == nil {
		if d, ok := denseCounts.Get().(*[][3]uint32); ok {
			c.dense = *d
		}
	}
	if int(f) >= len(c.dense) {
		c.dense = slices.Grow(c.dense, max(int(f)+1, 2*len(c.dense))-len(c.dense))
		c.dense = c.dense[:cap(c.dense)]
	}
	v := &c.dense[f]
	if *v == [3]uint32{} {
		c.touched = append(c.touched, f)
	}
	return v
}

// each calls fn for every feature counted, in ascending id order, and
// empties c, giving its dense array, zeroed, to denseCounts.
func (c *bundleCounts) each(fn func(uint32, [3]uint32)) {
	slices.Sort(c.touched)
	for _, f := range c.touched {
		fn(f, c.dense[f])
		c.dense[f] = [3]uint32{}
	}
	c.touched = nil
	if c.dense != nil {
		d := c.dense
		denseCounts.Put(&d)
		c.dense = nil
	}
	fs := slices.Sorted(maps.Keys(c.sparse))
	for _, f := range fs {
		fn(f, *c.sparse[f])
	}
	c.sparse = nil
}

// counts returns the block's counts as verify.FeatureCounts.
func (b featCounts) counts() []verify.FeatureCount {
	out := make([]verify.FeatureCount, len(b.Feats))
	for i, f := range b.Feats {
		out[i] = verify.FeatureCount{Feature: f, Held: b.Held[i], Released: b.Released[i], Kept: b.Kept[i]}
	}
	return out
}

// check refuses a block whose features are not ascending ids of block
// blk, or whose counts are malformed.
func (b featCounts) check(blk int64) error {
	n := len(b.Feats)
	if len(b.Held) != n || len(b.Released) != n || len(b.Kept) != n {
		return fmt.Errorf("feature accounting: malformed block %d", blk)
	}
	for i, f := range b.Feats {
		if int64(f>>blockBits) != blk || i > 0 && f <= b.Feats[i-1] {
			return fmt.Errorf("feature accounting: feature %d out of place in block %d", f, blk)
		}
		if b.Kept[i] < 0 || b.Kept[i] > min(b.Held[i], b.Released[i]) {
			return fmt.Errorf("feature accounting: feature %d kept %d of %d held, %d released", f, b.Kept[i], b.Held[i], b.Released[i])
		}
	}
	return nil
}

// featAcc accumulates the counts of one block of 2^blockBits feature
// ids: held, released and kept of feature Base+i at N[3i:3i+3]; N is nil
// while it holds nothing. Adding into it allocates nothing, so merging
// many bundles' blocks costs their entries, not a copy per merge.
type featAcc struct {
	Base uint32
	N    []int64
}

// featCombineFn sums featCounts of one block into a featAcc.
type featCombineFn struct{}

func (featCombineFn) CreateAccumulator() featAcc { return featAcc{} }

func (featCombineFn) AddInput(a featAcc, b featCounts) featAcc {
	if len(b.Feats) == 0 {
		return a
	}
	if a.N == nil {
		a = featAcc{Base: b.Feats[0] &^ (1<<blockBits - 1), N: make([]int64, 3<<blockBits)}
	}
	for i, f := range b.Feats {
		j := 3 * int(f-a.Base) // a feature of another block: out of range, a programming error
		a.N[j] += b.Held[i]
		a.N[j+1] += b.Released[i]
		a.N[j+2] += b.Kept[i]
	}
	return a
}

func (featCombineFn) MergeAccumulators(a, b featAcc) featAcc {
	switch {
	case b.N == nil:
		return a
	case a.N == nil:
		return b
	case a.Base != b.Base:
		panic(fmt.Sprintf("feature accounting: blocks at %d and %d merged", a.Base, b.Base))
	}
	for j, v := range b.N {
		a.N[j] += v
	}
	return a
}

func (featCombineFn) ExtractOutput(a featAcc) featCounts {
	var b featCounts
	for i := 0; 3*i < len(a.N); i++ {
		if v := a.N[3*i : 3*i+3]; v[0] != 0 || v[1] != 0 {
			b.Feats = append(b.Feats, a.Base+uint32(i))
			b.Held, b.Released, b.Kept = append(b.Held, v[0]), append(b.Released, v[1]), append(b.Kept, v[2])
		}
	}
	return b
}

// encFeatAcc encodes an accumulator as its block's counts, zeros left out.
func encFeatAcc(a featAcc) []byte {
	return encFeatCounts(featCombineFn{}.ExtractOutput(a))
}

func decFeatAcc(p []byte) (featAcc, error) {
	b, err := decFeatCounts(p)
	if err != nil {
		return featAcc{}, err
	}
	if len(b.Feats) > 0 {
		if err := b.check(int64(b.Feats[0] >> blockBits)); err != nil {
			return featAcc{}, err
		}
	}
	return featCombineFn{}.AddInput(featAcc{}, b), nil
}

func encFeatCounts(b featCounts) []byte {
	e := enc{b: make([]byte, 0, 8*len(b.Feats))}
	e.feats(b.Feats)
	for i := range b.Feats {
		e.uvarint(uint64(b.Held[i]))
		e.uvarint(uint64(b.Released[i]))
		e.uvarint(uint64(b.Kept[i]))
	}
	return e.b
}

func decFeatCounts(p []byte) (featCounts, error) {
	d := dec{b: p}
	b := featCounts{Feats: d.feats()}
	if d.err == nil {
		n := len(b.Feats)
		b.Held, b.Released, b.Kept = make([]int64, n), make([]int64, n), make([]int64, n)
		for i := range n {
			b.Held[i], b.Released[i], b.Kept[i] = int64(d.uvarint()), int64(d.uvarint()), int64(d.uvarint())
		}
	}
	return b, d.done("featCounts")
}

// summarizeFeaturesFn summarizes a bundle's merged blocks, each feature
// once.
type summarizeFeaturesFn struct {
	sum    verify.FeatureSummary
	blocks int
}

func (fn *summarizeFeaturesFn) ProcessElement(blk int64, b featCounts, _ func(Stats)) error {
	if err := b.check(blk); err != nil {
		return err
	}
	for _, c := range b.counts() {
		fn.sum.Add(c)
	}
	fn.blocks++
	return nil
}

func (fn *summarizeFeaturesFn) FinishBundle(emit func(Stats)) {
	if fn.blocks > 0 {
		emit(Stats{Features: fn.sum})
	}
	fn.sum, fn.blocks = verify.FeatureSummary{}, 0
}

// featureTableFn writes the merged blocks, in feature order, as the
// feature table.
type featureTableFn struct {
	Path      string         `json:"path"`
	Vocab     string         `json:"vocab,omitempty"`
	Sensitive *SensitiveRule `json:"sensitive,omitempty"`
}

func (fn *featureTableFn) ProcessElement(ctx context.Context, _ []byte, blocks func(*int64, *featCounts) bool, emit func(Stats)) error {
	type keyed struct {
		blk int64
		b   featCounts
	}
	var all []keyed
	var blk int64
	var b featCounts
	for blocks(&blk, &b) {
		if err := b.check(blk); err != nil {
			return err
		}
		all = append(all, keyed{blk, b})
	}
	slices.SortFunc(all, func(x, y keyed) int { return cmp.Compare(x.blk, y.blk) })
	var counts []verify.FeatureCount
	for i, k := range all {
		if i > 0 && k.blk == all[i-1].blk {
			return fmt.Errorf("feature accounting: block %d twice", k.blk)
		}
		counts = append(counts, k.b.counts()...)
	}
	var opts verify.FeatureTableOptions
	if fn.Vocab != "" && len(counts) > 0 { // else no row was read: no vocabulary may exist
		v, err := loadVocab(ctx, fn.Vocab)
		if err != nil {
			return markJobError(err)
		}
		opts.Name = v.Name
		if err := fn.Sensitive.resolve(ctx); err != nil {
			return err
		}
	}
	if fn.Sensitive != nil {
		opts.Sensitive = verify.SortedSet(fn.Sensitive.Features)
	}
	var buf bytes.Buffer
	if err := verify.WriteFeatureTable(&buf, counts, opts); err != nil {
		return err
	}
	if err := storage.WriteFile(ctx, fn.Path, buf.Bytes()); err != nil {
		return markJobError(err)
	}
	emit(Stats{FeatureTableRows: int64(len(counts))})
	return nil
}
