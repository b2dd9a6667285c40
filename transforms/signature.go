package transforms

import (
	"errors"
	"fmt"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/lsh"
	"github.com/smoothanon/smoothanon/matrix"
)

func init() {
	register.DoFn2x0[matrix.Matrix, func(KeyedBlock)](&signMinHashFn{})
	register.DoFn2x0[matrix.Matrix, func(int64, featBlock)](&featureCountsFn{})
	register.DoFn2x0[matrix.Matrix, func(int64, featMin)](&featureHopsFn{})
	register.DoFn3x1[matrix.Matrix, func(*int64, *featBlock) bool, func(KeyedBlock), error](&signHubFn{})
	register.DoFn3x1[matrix.Matrix, func(*int64, *featMin) bool, func(KeyedBlock), error](&signTwoHopFn{})
}

// Key selects what leads a row's chunk sort key, ahead of its MinHash
// signature and user id. Rows that should be solved together must share a
// chunk, and chunks are ranges of this order.
type Key int

const (
	// KeySpectral (the default) leads with a smoothed random coordinate
	// (see spectral.go): rows of one community get nearly equal values, so
	// only the communities at chunk boundaries are split; the pipeline adds
	// one sharpening round (ChunkParams.Sharpen). On data with communities
	// it loses the least Jaccard against a whole-data solve of the keys
	// (see docs/decisions/003-spectral-chunk-key.md). On lists without
	// community structure KeyHub does better. Each iteration costs a
	// pass over the rows, a shuffle of per-bundle sums per feature and a side
	// input of one value per feature.
	KeySpectral Key = iota
	// KeyHub leads with the row's most frequent feature (ties by a hash of
	// the id), so rows sharing a popular feature sit together. One shuffle
	// of all entries; a side input of one value per feature.
	KeyHub
	// KeyTwoHop leads with the least user hash over all users that share a
	// feature with the row (a MinHash of its two-hop neighbourhood). Same
	// cost as KeyHub.
	KeyTwoHop
	// KeyMinHash uses the plain MinHash signature: no extra shuffle.
	KeyMinHash
	// KeyAuto is KeySpectral or KeyHub, chosen by ChooseKey from a sample
	// of the input before the pipeline is built (see autokey.go).
	KeyAuto
)

var keyNames = []string{KeySpectral: "spectral", KeyHub: "hub", KeyTwoHop: "two_hop", KeyMinHash: "minhash", KeyAuto: "auto"}

// String returns the flag name of the key.
func (k Key) String() string {
	if k >= 0 && int(k) < len(keyNames) {
		return keyNames[k]
	}
	return fmt.Sprintf("Key(%d)", int(k))
}

// ParseKey parses auto, spectral, hub, two_hop or minhash.
func ParseKey(s string) (Key, error) {
	for k, name := range keyNames {
		if s == name {
			return Key(k), nil
		}
	}
	return 0, fmt.Errorf("invalid chunk key %q (want auto, spectral, hub, two_hop or minhash)", s)
}

// SignatureParams configure Signature.
type SignatureParams struct {
	// Seed derives the MinHash functions and the spectral start values.
	// Optional; default 0.
	Seed int64
	// Key leads the sort key. Optional; default KeySpectral; not KeyAuto
	// (ChooseKey resolves it first).
	Key Key
	// Iterations is the number of averaging rounds of KeySpectral.
	// Optional; default DefaultSpectralIterations (0 means default); at
	// least 1.
	Iterations int
}

func checkSignatureParams(p SignatureParams) error {
	switch {
	case p.Key == KeyAuto:
		return errors.New("signature: key auto must be resolved by ChooseKey before the pipeline is built")
	case p.Key < KeySpectral || p.Key > KeyMinHash:
		return fmt.Errorf("signature: invalid key %d", int(p.Key))
	case p.Iterations < 0 || p.Iterations > 1000:
		return fmt.Errorf("signature: %d spectral iterations, want 1..1000 (0 means the default %d)", p.Iterations, DefaultSpectralIterations)
	}
	return nil
}

// Signature turns a PCollection<matrix.Matrix> of blocks of rows into a
// PCollection<KeyedBlock> carrying each row's leading sort key (see Key).
func Signature(s beam.Scope, blocks beam.PCollection, params SignatureParams) beam.PCollection {
	s = s.Scope("Signature")
	if err := checkSignatureParams(params); err != nil {
		panic(err)
	}
	switch params.Key {
	case KeySpectral:
		it := params.Iterations
		if it == 0 {
			it = DefaultSpectralIterations
		}
		return spectral(s, blocks, params.Seed, it)
	case KeyHub:
		counts := beam.CombinePerKey(s, mergeBlocks, beam.ParDo(s, &featureCountsFn{}, blocks))
		return beam.ParDo(s, &signHubFn{Seed: params.Seed}, blocks, beam.SideInput{Input: counts})
	case KeyTwoHop:
		hops := beam.CombinePerKey(s, mergeMins, beam.ParDo(s, &featureHopsFn{}, blocks))
		return beam.ParDo(s, &signTwoHopFn{Seed: params.Seed}, blocks, beam.SideInput{Input: hops})
	}
	return beam.ParDo(s, &signMinHashFn{Seed: params.Seed}, blocks)
}

type signMinHashFn struct {
	Seed int64 `json:"seed"`
}

func (fn *signMinHashFn) ProcessElement(b matrix.Matrix, emit func(KeyedBlock)) {
	emit(KeyedBlock{Rows: b, Seed: fn.Seed})
}

// featureCountsFn counts the rows of every feature (per bundle, in
// blocks; see bundleSums).
type featureCountsFn struct{ sums bundleSums }

// StartBundle: see spectralFirstFn.StartBundle.
func (fn *featureCountsFn) StartBundle(_ func(int64, featBlock)) { fn.sums = newBundleSums() }

func (fn *featureCountsFn) ProcessElement(b matrix.Matrix, _ func(int64, featBlock)) {
	fn.sums.add(b.Features, 1)
}

func (fn *featureCountsFn) FinishBundle(emit func(int64, featBlock)) { fn.sums.flush(emit) }

// hubKey orders features by descending count, ties by a hash of the id.
func hubKey(f uint32, count int64) uint64 {
	c := min(uint64(count), math.MaxUint32)
	return (math.MaxUint32-c)<<32 | lsh.Mix64(uint64(f))>>32
}

// signHubFn leads each row with the least hubKey of its features.
type signHubFn struct {
	Seed int64 `json:"seed"`
	t    *table[uint64]
}

func (fn *signHubFn) ProcessElement(b matrix.Matrix, counts func(*int64, *featBlock) bool, emit func(KeyedBlock)) error {
	if fn.t == nil {
		t, err := readSums("hub key", counts, func(f uint32, _, n int64) (uint64, error) { return hubKey(f, n), nil })
		if err != nil {
			return err
		}
		fn.t = t
	}
	emit(leadBy(b, fn.t, fn.Seed))
	return nil
}

func (fn *signHubFn) FinishBundle(_ func(*int64, *featBlock) bool, _ func(KeyedBlock)) { fn.t = nil }

// leadBy keys each row of b by the least table value of its features.
func leadBy(b matrix.Matrix, t *table[uint64], seed int64) KeyedBlock {
	lead := make([]uint64, b.NumRows())
	for i := range lead {
		lead[i] = leastOver(t, b.Row(i))
	}
	return KeyedBlock{Rows: b, Lead: lead, Seed: seed}
}

// hopHash is the user hash the two-hop key minimises. It must be
// independent of userHash, which picks the boundary sample: a row's own
// user is in its two-hop neighbourhood, so with one hash every sampled row
// would also get a tiny key and the boundaries would all crowd at the start.
func hopHash(user string) uint64 { return lsh.Mix64(userHash(user) ^ 0x6A09E667F3BCC908) }

// featureHopsFn keeps, per feature, the least hopHash of its users (per
// bundle, in blocks).
type featureHopsFn struct{ mins bundleMins }

// StartBundle: see spectralFirstFn.StartBundle.
func (fn *featureHopsFn) StartBundle(_ func(int64, featMin)) { fn.mins = newBundleMins() }

func (fn *featureHopsFn) ProcessElement(b matrix.Matrix, _ func(int64, featMin)) {
	for i, u := range b.Users {
		fn.mins.add(b.Row(i), hopHash(u))
	}
}

func (fn *featureHopsFn) FinishBundle(emit func(int64, featMin)) { fn.mins.flush(emit) }

// signTwoHopFn leads each row with the least hopHash over the users that
// share a feature with it.
type signTwoHopFn struct {
	Seed int64 `json:"seed"`
	t    *table[uint64]
}

func (fn *signTwoHopFn) ProcessElement(b matrix.Matrix, hops func(*int64, *featMin) bool, emit func(KeyedBlock)) error {
	if fn.t == nil {
		t, err := readMins(hops)
		if err != nil {
			return err
		}
		fn.t = t
	}
	emit(leadBy(b, fn.t, fn.Seed))
	return nil
}

func (fn *signTwoHopFn) FinishBundle(_ func(*int64, *featMin) bool, _ func(KeyedBlock)) { fn.t = nil }
