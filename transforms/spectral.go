package transforms

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/lsh"
	"github.com/smoothanon/smoothanon/matrix"
)

// DefaultSpectralIterations is the default number of averaging rounds of
// the spectral key: fewer rounds cost the chunked release Jaccard on data
// with communities, more help it little and cost a pass over the rows each
// (see docs/decisions/003-spectral-chunk-key.md).
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

// readCoords drains a side input of merged feature sums: each feature's
// coordinate is the truncated mean of its rows' values.
func readCoords(next func(*int64, *featBlock) bool) (*table[int32], error) {
	return readSums("spectral key", next, func(f uint32, sum, n int64) (int32, error) {
		v := sum / n
		if v < -1<<(coordBits-1) || v >= 1<<(coordBits-1) {
			return 0, fmt.Errorf("spectral key: coordinate %d of feature %d out of range", v, f)
		}
		return int32(v), nil
	})
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

func init() {
	register.DoFn2x1[matrix.Matrix, func(int64, featBlock), error](&spectralFirstFn{})
	register.DoFn3x1[matrix.Matrix, func(*int64, *featBlock) bool, func(int64, featBlock), error](&spectralStepFn{})
	register.DoFn3x1[matrix.Matrix, func(*int64, *featBlock) bool, func(KeyedBlock), error](&signSpectralFn{})
	register.Emitter1[KeyedBlock]()
}

// spectralFirstFn runs a round from the seeded initial values.
type spectralFirstFn struct {
	Seed int64 `json:"seed"`
	sums bundleSums
}

// StartBundle drops any sums of an earlier bundle that failed before
// FinishBundle, so a retried bundle counts each entry once.
func (fn *spectralFirstFn) StartBundle(_ func(int64, featBlock)) { fn.sums = newBundleSums() }

func (fn *spectralFirstFn) ProcessElement(b matrix.Matrix, _ func(int64, featBlock)) error {
	s := spectralSeed(fn.Seed)
	for i := range b.Users {
		c, err := rowCoord(b.Row(i), func(f uint32) (int64, error) { return initCoord(s, f), nil })
		if err != nil {
			return err
		}
		fn.sums.add(b.Row(i), c)
	}
	return nil
}

func (fn *spectralFirstFn) FinishBundle(emit func(int64, featBlock)) { fn.sums.flush(emit) }

// spectralStepFn runs a later round from the previous feature sums.
type spectralStepFn struct {
	c    *table[int32]
	sums bundleSums
}

// StartBundle: see spectralFirstFn.StartBundle.
func (fn *spectralStepFn) StartBundle(_ func(*int64, *featBlock) bool, _ func(int64, featBlock)) {
	fn.sums = newBundleSums()
}

func (fn *spectralStepFn) ProcessElement(b matrix.Matrix, prev func(*int64, *featBlock) bool, _ func(int64, featBlock)) error {
	for i := range b.Users {
		c, err := coordOfRow(&fn.c, b.Users[i], b.Row(i), prev)
		if err != nil {
			return err
		}
		fn.sums.add(b.Row(i), c)
	}
	return nil
}

func (fn *spectralStepFn) FinishBundle(_ func(*int64, *featBlock) bool, emit func(int64, featBlock)) {
	fn.sums.flush(emit)
	fn.c = nil // a side-input cache lives for one bundle: see perFeature.each
}

// coordOfRow loads the side input into *cache once and returns the
// coordinate of a row.
func coordOfRow(cache **table[int32], user string, features []uint32, side func(*int64, *featBlock) bool) (int64, error) {
	if *cache == nil {
		c, err := readCoords(side)
		if err != nil {
			return 0, err
		}
		*cache = c
	}
	return rowCoord(features, func(f uint32) (int64, error) {
		v, ok := (*cache).get(f)
		if !ok {
			return 0, fmt.Errorf("spectral key: feature %d of a row has no coordinate", f)
		}
		return int64(v), nil
	})
}

// signSpectralFn keys each row by its spectral coordinate.
type signSpectralFn struct {
	Seed int64 `json:"seed"`
	c    *table[int32]
}

func (fn *signSpectralFn) ProcessElement(b matrix.Matrix, fx func(*int64, *featBlock) bool, emit func(KeyedBlock)) error {
	lead := make([]uint64, b.NumRows())
	for i := range b.Users {
		c, err := coordOfRow(&fn.c, b.Users[i], b.Row(i), fx)
		if err != nil {
			return err
		}
		lead[i] = leadKey(c)
	}
	emit(KeyedBlock{Rows: b, Lead: lead, Seed: fn.Seed})
	return nil
}

func (fn *signSpectralFn) FinishBundle(_ func(*int64, *featBlock) bool, _ func(KeyedBlock)) {
	fn.c = nil
}

// spectral returns the blocks keyed by the spectral coordinate after
// iterations rounds (at least 1).
func spectral(s beam.Scope, blocks beam.PCollection, seed int64, iterations int) beam.PCollection {
	s = s.Scope("Spectral")
	fx := beam.CombinePerKey(s, mergeBlocks, beam.ParDo(s, &spectralFirstFn{Seed: seed}, blocks))
	for i := 1; i < iterations; i++ {
		fx = beam.CombinePerKey(s, mergeBlocks, beam.ParDo(s, &spectralStepFn{}, blocks, beam.SideInput{Input: fx}))
	}
	return beam.ParDo(s, &signSpectralFn{Seed: seed}, blocks, beam.SideInput{Input: fx})
}
