package transforms

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/lsh"
)

// DefaultSpectralIterations is the default number of averaging rounds of
// the spectral key. On dblp (3 chunks of ~1e5 rows) the Jaccard of the
// chunked release rises with the rounds up to about 10 and stays flat to 40.
const DefaultSpectralIterations = 10

// The spectral key is a smoothed random coordinate: every feature starts at
// a seeded random value, then each round sets every row to the mean of its
// features' values and every feature to the mean of its rows' values (a
// random walk on the bipartite user–feature graph, i.e. power iteration
// towards the graph's slowest-mixing direction). Rows of one community end
// up with nearly equal coordinates, so sorting by it keeps communities
// together and only the communities at the chunk boundaries are cut.
//
// All arithmetic is on integers: sums of int64 are exact whatever the
// bundle and merge order, so the coordinates, and therefore the chunks and
// the release, are the same on every runner. Values stay within
// [-2^29, 2^29) (means never leave the range of their inputs), so a feature
// held by up to 2^34 rows cannot overflow its int64 sum.

const coordBits = 30

// initCoord is feature f's starting coordinate in [-2^29, 2^29).
func initCoord(seed uint64, f uint32) int64 {
	return int64(lsh.Mix64(seed^(uint64(f)+1)*0x9E3779B97F4A7C15)>>(64-coordBits)) - 1<<(coordBits-1)
}

// spectralSeed derives the initial-value seed from the run seed, apart from
// the MinHash seeds.
func spectralSeed(seed int64) uint64 { return lsh.Mix64(uint64(seed) ^ 0x3C6EF372FE94F82B) }

// coords maps feature ids to coordinates: a dense slice when the ids are
// dense (the importers number features 0..m-1), a map otherwise.
type coords struct {
	dense  []int32
	has    []bool
	sparse map[uint32]int32
}

// readCoords drains a side input of feature blocks: each feature's
// coordinate is the truncated mean of its rows' values.
func readCoords(next func(*int64, *featBlock) bool) (*coords, error) {
	var fs []uint32
	var vs []int32
	var maxID uint32
	var blk int64
	var b featBlock
	for next(&blk, &b) {
		if len(b.Sum) != len(b.Feats) || len(b.N) != len(b.Feats) {
			return nil, fmt.Errorf("spectral key: malformed block %d", blk)
		}
		for i, f := range b.Feats {
			if b.N[i] <= 0 || int64(f>>blockBits) != blk {
				return nil, fmt.Errorf("spectral key: bad sum of feature %d in block %d", f, blk)
			}
			v := b.Sum[i] / b.N[i]
			if v < -1<<(coordBits-1) || v >= 1<<(coordBits-1) {
				return nil, fmt.Errorf("spectral key: coordinate %d of feature %d out of range", v, f)
			}
			fs = append(fs, f)
			vs = append(vs, int32(v))
			maxID = max(maxID, f)
		}
	}
	c := &coords{}
	if uint64(maxID) < 4*uint64(len(fs))+1<<16 {
		c.dense = make([]int32, int(maxID)+1)
		c.has = make([]bool, int(maxID)+1)
		for i, f := range fs {
			c.dense[f], c.has[f] = vs[i], true
		}
		return c, nil
	}
	c.sparse = make(map[uint32]int32, len(fs))
	for i, f := range fs {
		c.sparse[f] = vs[i]
	}
	return c, nil
}

func (c *coords) get(f uint32) (int32, bool) {
	if c.dense != nil {
		if int(f) < len(c.dense) && c.has[f] {
			return c.dense[f], true
		}
		return 0, false
	}
	v, ok := c.sparse[f]
	return v, ok
}

// rowCoord is the mean of the row's feature coordinates (0 for an empty
// row), truncated toward zero.
func rowCoord(features []uint32, value func(uint32) (int64, error)) (int64, error) {
	if len(features) == 0 {
		return 0, nil
	}
	var sum int64
	for _, f := range features {
		v, err := value(f)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum / int64(len(features)), nil
}

// leadKey maps a signed coordinate to a uint64 of the same order.
func leadKey(c int64) uint64 { return uint64(c) ^ 1<<63 }

// Rounds are aggregated in blocks: Beam's lifted combiner caches only a few
// thousand keys per bundle, so with one key per feature nearly every entry
// would cross the shuffle on its own (on dblp, millions of elements per
// round). Instead each bundle sums its
// entries per feature in memory and emits one featBlock per block of
// 2^blockBits consecutive feature ids it touched; blocks merge exactly.
const blockBits = 12

// featBlock holds the exact running sums and counts of row values of some
// features of one block, sorted by feature id.
type featBlock struct {
	Feats []uint32
	Sum   []int64
	N     []int64
}

// mergeBlocks adds two blocks feature by feature.
func mergeBlocks(a, b featBlock) featBlock {
	out := featBlock{
		Feats: make([]uint32, 0, len(a.Feats)+len(b.Feats)),
		Sum:   make([]int64, 0, len(a.Feats)+len(b.Feats)),
		N:     make([]int64, 0, len(a.Feats)+len(b.Feats)),
	}
	i, j := 0, 0
	for i < len(a.Feats) || j < len(b.Feats) {
		switch {
		case j == len(b.Feats) || i < len(a.Feats) && a.Feats[i] < b.Feats[j]:
			out.Feats, out.Sum, out.N = append(out.Feats, a.Feats[i]), append(out.Sum, a.Sum[i]), append(out.N, a.N[i])
			i++
		case i == len(a.Feats) || b.Feats[j] < a.Feats[i]:
			out.Feats, out.Sum, out.N = append(out.Feats, b.Feats[j]), append(out.Sum, b.Sum[j]), append(out.N, b.N[j])
			j++
		default:
			out.Feats, out.Sum, out.N = append(out.Feats, a.Feats[i]), append(out.Sum, a.Sum[i]+b.Sum[j]), append(out.N, a.N[i]+b.N[j])
			i++
			j++
		}
	}
	return out
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

// bundleSums accumulates one bundle's (feature, row value) pairs.
type bundleSums map[uint32]*[2]int64

func (m bundleSums) add(features []uint32, v int64) {
	for _, f := range features {
		a := m[f]
		if a == nil {
			a = new([2]int64)
			m[f] = a
		}
		a[0] += v
		a[1]++
	}
}

// flush emits the sums as blocks and empties m.
func (m bundleSums) flush(emit func(int64, featBlock)) {
	fs := make([]uint32, 0, len(m))
	for f := range m {
		fs = append(fs, f)
	}
	slices.Sort(fs)
	for i := 0; i < len(fs); {
		blk := fs[i] >> blockBits
		var b featBlock
		for ; i < len(fs) && fs[i]>>blockBits == blk; i++ {
			a := m[fs[i]]
			b.Feats, b.Sum, b.N = append(b.Feats, fs[i]), append(b.Sum, a[0]), append(b.N, a[1])
		}
		emit(int64(blk), b)
	}
	clear(m)
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(featBlock{}), encFeatBlock, decFeatBlock)
	register.Function2x1(mergeBlocks)
	register.DoFn2x1[Row, func(int64, featBlock), error](&spectralFirstFn{})
	register.Emitter2[int64, featBlock]()
	register.DoFn3x1[Row, func(*int64, *featBlock) bool, func(int64, featBlock), error](&spectralStepFn{})
	register.Iter2[int64, featBlock]()
	register.DoFn3x1[Row, func(*int64, *featBlock) bool, func(SigRow), error](&signSpectralFn{})
}

// spectralFirstFn runs a round from the seeded initial values.
type spectralFirstFn struct {
	Seed int64 `json:"seed"`
	sums bundleSums
}

// StartBundle drops any sums of an earlier bundle that failed before
// FinishBundle, so a retried bundle counts each entry once.
func (fn *spectralFirstFn) StartBundle(_ func(int64, featBlock)) { fn.sums = bundleSums{} }

func (fn *spectralFirstFn) ProcessElement(r Row, _ func(int64, featBlock)) error {
	s := spectralSeed(fn.Seed)
	c, err := rowCoord(r.Features, func(f uint32) (int64, error) { return initCoord(s, f), nil })
	if err != nil {
		return err
	}
	fn.sums.add(r.Features, c)
	return nil
}

func (fn *spectralFirstFn) FinishBundle(emit func(int64, featBlock)) { fn.sums.flush(emit) }

// spectralStepFn runs a later round from the previous feature sums.
type spectralStepFn struct {
	c    *coords
	sums bundleSums
}

// StartBundle: see spectralFirstFn.StartBundle.
func (fn *spectralStepFn) StartBundle(_ func(*int64, *featBlock) bool, _ func(int64, featBlock)) {
	fn.sums = bundleSums{}
}

func (fn *spectralStepFn) ProcessElement(r Row, prev func(*int64, *featBlock) bool, _ func(int64, featBlock)) error {
	c, err := coordOfRow(&fn.c, r, prev)
	if err != nil {
		return err
	}
	fn.sums.add(r.Features, c)
	return nil
}

func (fn *spectralStepFn) FinishBundle(_ func(*int64, *featBlock) bool, emit func(int64, featBlock)) {
	fn.sums.flush(emit)
}

// coordOfRow loads the side input into *cache once and returns the row's
// coordinate.
func coordOfRow(cache **coords, r Row, side func(*int64, *featBlock) bool) (int64, error) {
	if *cache == nil {
		c, err := readCoords(side)
		if err != nil {
			return 0, err
		}
		*cache = c
	}
	return rowCoord(r.Features, func(f uint32) (int64, error) {
		v, ok := (*cache).get(f)
		if !ok {
			return 0, fmt.Errorf("spectral key: feature %d of user %q has no coordinate", f, r.User)
		}
		return int64(v), nil
	})
}

// signSpectralFn emits each row with its MinHash signature behind the
// spectral coordinate.
type signSpectralFn struct {
	Seed int64 `json:"seed"`
	h    *lsh.Hasher
	c    *coords
}

func (fn *signSpectralFn) ProcessElement(r Row, fx func(*int64, *featBlock) bool, emit func(SigRow)) error {
	if fn.h == nil {
		fn.h = lsh.New(fn.Seed)
	}
	c, err := coordOfRow(&fn.c, r, fx)
	if err != nil {
		return err
	}
	emit(SigRow{Lead: leadKey(c), Sig: fn.h.Sign(r.Features), Row: r})
	return nil
}

// spectral returns the rows keyed by the spectral coordinate after
// iterations rounds (at least 1).
func spectral(s beam.Scope, rows beam.PCollection, seed int64, iterations int) beam.PCollection {
	s = s.Scope("Spectral")
	fx := beam.CombinePerKey(s, mergeBlocks, beam.ParDo(s, &spectralFirstFn{Seed: seed}, rows))
	for i := 1; i < iterations; i++ {
		fx = beam.CombinePerKey(s, mergeBlocks, beam.ParDo(s, &spectralStepFn{}, rows, beam.SideInput{Input: fx}))
	}
	return beam.ParDo(s, &signSpectralFn{Seed: seed}, rows, beam.SideInput{Input: fx})
}
