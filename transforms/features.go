package transforms

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Per-feature aggregates (the spectral key's rounds, sharpening, the hub
// and two-hop keys) are computed per bundle in memory and cross the
// shuffle in blocks: Beam's lifted combiner caches only a few thousand keys
// per bundle, so with one key per feature nearly every entry would cross on
// its own. Each bundle emits one block per run of 2^blockBits consecutive
// feature ids it touched; blocks merge exactly, in any order. The merged
// blocks come back to every worker as a side input, read into a table.
const blockBits = 12

// denseFeatures bounds the feature ids a bundle sums in arrays indexed by
// id (16 bytes per id; a process may sum many bundles at once), and
// denseTable those of a side-input table (5 bytes per id for the spectral
// key, one table per process at a time); larger ids go to a map (about 40
// bytes per id).
const (
	denseFeatures = 1 << 22
	denseTable    = 1 << 26
)

// featBlock holds the exact sums and counts of some values of some features
// of one block, sorted by feature id.
type featBlock struct {
	Feats []uint32
	Sum   []int64
	N     []int64
}

// featMin holds the least value of some features of one block, sorted by
// feature id.
type featMin struct {
	Feats []uint32
	Min   []uint64
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(featBlock{}), encFeatBlock, decFeatBlock)
	beam.RegisterCoder(reflect.TypeOf(featMin{}), encFeatMin, decFeatMin)
	register.Function2x1(mergeBlocks)
	register.Function2x1(mergeMins)
	register.Emitter2[int64, featBlock]()
	register.Iter2[int64, featBlock]()
	register.Emitter2[int64, featMin]()
	register.Iter2[int64, featMin]()
}

// mergeSorted merges two feature-sorted blocks given as (ids, values),
// adding the values of a feature in both.
func mergeSorted[V any](af []uint32, av []V, bf []uint32, bv []V, add func(V, V) V) ([]uint32, []V) {
	fs := make([]uint32, 0, len(af)+len(bf))
	vs := make([]V, 0, len(af)+len(bf))
	i, j := 0, 0
	for i < len(af) || j < len(bf) {
		switch {
		case j == len(bf) || i < len(af) && af[i] < bf[j]:
			fs, vs = append(fs, af[i]), append(vs, av[i])
			i++
		case i == len(af) || bf[j] < af[i]:
			fs, vs = append(fs, bf[j]), append(vs, bv[j])
			j++
		default:
			fs, vs = append(fs, af[i]), append(vs, add(av[i], bv[j]))
			i++
			j++
		}
	}
	return fs, vs
}

// mergeBlocks adds two blocks feature by feature.
func mergeBlocks(a, b featBlock) featBlock {
	zip := func(x featBlock) [][2]int64 {
		v := make([][2]int64, len(x.Feats))
		for i := range v {
			v[i] = [2]int64{x.Sum[i], x.N[i]}
		}
		return v
	}
	fs, vs := mergeSorted(a.Feats, zip(a), b.Feats, zip(b), func(x, y [2]int64) [2]int64 { return [2]int64{x[0] + y[0], x[1] + y[1]} })
	out := featBlock{Feats: fs, Sum: make([]int64, len(vs)), N: make([]int64, len(vs))}
	for i, v := range vs {
		out.Sum[i], out.N[i] = v[0], v[1]
	}
	return out
}

// mergeMins keeps the least value of every feature.
func mergeMins(a, b featMin) featMin {
	fs, vs := mergeSorted(a.Feats, a.Min, b.Feats, b.Min, func(x, y uint64) uint64 { return min(x, y) })
	return featMin{Feats: fs, Min: vs}
}

func encFeatBlock(b featBlock) []byte {
	e := enc{b: make([]byte, 0, 8*len(b.Feats))}
	e.feats(b.Feats)
	for i := range b.Feats {
		e.uvarint(uint64(b.Sum[i]<<1) ^ uint64(b.Sum[i]>>63)) // zigzag
		e.uvarint(uint64(b.N[i]))
	}
	return e.b
}

func decFeatBlock(p []byte) (featBlock, error) {
	d := dec{b: p}
	b := featBlock{Feats: d.feats()}
	if d.err == nil {
		b.Sum, b.N = make([]int64, len(b.Feats)), make([]int64, len(b.Feats))
		for i := range b.Feats {
			z := d.uvarint()
			b.Sum[i] = int64(z>>1) ^ -int64(z&1)
			b.N[i] = int64(d.uvarint())
		}
	}
	return b, d.done("featBlock")
}

func encFeatMin(b featMin) []byte {
	e := enc{b: make([]byte, 0, 12*len(b.Feats))}
	e.feats(b.Feats)
	for _, v := range b.Min {
		e.u64(v)
	}
	return e.b
}

func decFeatMin(p []byte) (featMin, error) {
	d := dec{b: p}
	b := featMin{Feats: d.feats()}
	if d.err == nil {
		b.Min = make([]uint64, len(b.Feats))
		for i := range b.Min {
			b.Min[i] = d.u64()
		}
	}
	return b, d.done("featMin")
}

// perFeature accumulates one value per feature id: in an array for small
// ids, in a map for the rest. Callers update a feature's value in place
// through at, so the hot loop has no call through a function value (one
// was two thirds of a spectral round's summing).
type perFeature[V comparable] struct {
	dense  []V
	sparse map[uint32]*V
}

func newPerFeature[V comparable]() *perFeature[V] {
	return &perFeature[V]{sparse: map[uint32]*V{}}
}

// at returns feature f's value, the zero V until it is first set. The
// pointer is good until the next call: the array may grow.
func (p *perFeature[V]) at(f uint32) *V {
	if f >= denseFeatures {
		v := p.sparse[f]
		if v == nil {
			v = new(V)
			p.sparse[f] = v
		}
		return v
	}
	if int(f) >= len(p.dense) {
		p.dense = slices.Grow(p.dense, max(int(f)+1, 2*len(p.dense))-len(p.dense))
		p.dense = p.dense[:cap(p.dense)]
	}
	return &p.dense[f]
}

// each calls fn for every feature with a value other than zero, in
// ascending id order, and empties p, freeing its memory: the runner keeps
// a DoFn between bundles, and a stage's DoFns between stages.
func (p *perFeature[V]) each(fn func(uint32, V)) {
	var zero V
	for f, v := range p.dense {
		if v != zero {
			fn(uint32(f), v)
		}
	}
	p.dense = nil
	fs := make([]uint32, 0, len(p.sparse))
	for f := range p.sparse {
		fs = append(fs, f)
	}
	slices.Sort(fs)
	for _, f := range fs {
		if v := *p.sparse[f]; v != zero {
			fn(f, v)
		}
	}
	p.sparse = map[uint32]*V{}
}

// bundleSums accumulates one bundle's (feature, value) pairs as exact sums
// and counts.
type bundleSums struct{ p *perFeature[[2]int64] }

func newBundleSums() bundleSums {
	return bundleSums{newPerFeature[[2]int64]()}
}

// add counts value v once for every feature of a row.
func (m bundleSums) add(features []uint32, v int64) {
	for _, f := range features {
		e := m.p.at(f)
		e[0] += v
		e[1]++
	}
}

// flush emits the sums in blocks and empties m.
func (m bundleSums) flush(emit func(int64, featBlock)) {
	var b featBlock
	blk := int64(-1)
	m.p.each(func(f uint32, v [2]int64) {
		if k := int64(f >> blockBits); k != blk {
			if blk >= 0 {
				emit(blk, b)
			}
			blk, b = k, featBlock{}
		}
		b.Feats, b.Sum, b.N = append(b.Feats, f), append(b.Sum, v[0]), append(b.N, v[1])
	})
	if blk >= 0 {
		emit(blk, b)
	}
}

// bundleMins keeps one bundle's least value per feature; values are stored
// complemented so that the zero value means none.
type bundleMins struct{ p *perFeature[uint64] }

func newBundleMins() bundleMins {
	return bundleMins{newPerFeature[uint64]()}
}

func (m bundleMins) add(features []uint32, v uint64) {
	for _, f := range features {
		e := m.p.at(f)
		*e = max(*e, ^v)
	}
}

func (m bundleMins) flush(emit func(int64, featMin)) {
	var b featMin
	blk := int64(-1)
	m.p.each(func(f uint32, v uint64) {
		if k := int64(f >> blockBits); k != blk {
			if blk >= 0 {
				emit(blk, b)
			}
			blk, b = k, featMin{}
		}
		b.Feats, b.Min = append(b.Feats, f), append(b.Min, ^v)
	})
	if blk >= 0 {
		emit(blk, b)
	}
}

// table maps feature ids to values: an array for small ids, a map for
// the rest.
type table[V any] struct {
	dense  []V
	has    []bool
	sparse map[uint32]V
}

func (t *table[V]) set(f uint32, v V) {
	if f >= denseTable {
		if t.sparse == nil {
			t.sparse = map[uint32]V{}
		}
		t.sparse[f] = v
		return
	}
	if int(f) >= len(t.dense) {
		n := max(int(f)+1, 2*len(t.dense))
		t.dense = append(t.dense, make([]V, n-len(t.dense))...)
		t.has = append(t.has, make([]bool, n-len(t.has))...)
	}
	t.dense[f], t.has[f] = v, true
}

func (t *table[V]) get(f uint32) (V, bool) {
	if int(f) < len(t.dense) {
		return t.dense[f], t.has[f]
	}
	v, ok := t.sparse[f]
	return v, ok
}

// readSums drains a side input of merged featBlocks into a table, the
// value of a feature being value(its sum, its count).
func readSums[V any](what string, next func(*int64, *featBlock) bool, value func(f uint32, sum, n int64) (V, error)) (*table[V], error) {
	t := &table[V]{}
	var blk int64
	var b featBlock
	for next(&blk, &b) {
		if len(b.Sum) != len(b.Feats) || len(b.N) != len(b.Feats) {
			return nil, fmt.Errorf("%s: malformed block %d", what, blk)
		}
		for i, f := range b.Feats {
			if b.N[i] <= 0 || int64(f>>blockBits) != blk {
				return nil, fmt.Errorf("%s: bad sum of feature %d in block %d", what, f, blk)
			}
			v, err := value(f, b.Sum[i], b.N[i])
			if err != nil {
				return nil, err
			}
			t.set(f, v)
		}
	}
	return t, nil
}

// readMins drains a side input of merged featMin blocks into a table.
func readMins(next func(*int64, *featMin) bool) (*table[uint64], error) {
	t := &table[uint64]{}
	var blk int64
	var b featMin
	for next(&blk, &b) {
		if len(b.Min) != len(b.Feats) {
			return nil, fmt.Errorf("two-hop key: malformed block %d", blk)
		}
		for i, f := range b.Feats {
			if int64(f>>blockBits) != blk {
				return nil, fmt.Errorf("two-hop key: feature %d in block %d", f, blk)
			}
			t.set(f, b.Min[i])
		}
	}
	return t, nil
}

// leastOver is the least table value over the features of a row
// (MaxUint64 for a row without features or without values).
func leastOver(t *table[uint64], features []uint32) uint64 {
	least := uint64(math.MaxUint64)
	for _, f := range features {
		if v, ok := t.get(f); ok && v < least {
			least = v
		}
	}
	return least
}
