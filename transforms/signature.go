package transforms

import (
	"fmt"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/lsh"
)

func init() {
	register.DoFn2x0[Row, func(SigRow)](&signFn{})
	register.Emitter1[SigRow]()
	register.Function2x0(featureUserHashes)
	register.Emitter2[int64, uint64]()
	register.Function2x1(minUint64)
	register.DoFn3x0[Row, func(*int64, *uint64) bool, func(SigRow)](&signTwoHopFn{})
	register.Iter2[int64, uint64]()
	register.Function2x0(featureOnes)
	register.Function2x1(sumUint64)
	register.Function2x2(hubKey)
}

// Key selects what leads a row's chunk sort key, ahead of its MinHash
// signature and user id. Rows that should be solved together must share a
// chunk, and chunks are ranges of this order.
type Key int

const (
	// KeySpectral (the default) leads with a smoothed random coordinate
	// (see spectral.go): rows of one community get nearly equal values, so
	// only the communities at chunk boundaries are split; the pipeline adds
	// one sharpening round (ChunkParams.Sharpen). On dblp it loses the
	// least Jaccard against a whole-data solve of the keys, the hub key
	// and plain MinHash more (docs/performance.md). On lists without
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
)

var keyNames = []string{KeySpectral: "spectral", KeyHub: "hub", KeyTwoHop: "two_hop", KeyMinHash: "minhash"}

// String returns the flag name of the key.
func (k Key) String() string {
	if k >= 0 && int(k) < len(keyNames) {
		return keyNames[k]
	}
	return fmt.Sprintf("Key(%d)", int(k))
}

// ParseKey parses spectral, hub, two_hop or minhash.
func ParseKey(s string) (Key, error) {
	for k, name := range keyNames {
		if s == name {
			return Key(k), nil
		}
	}
	return 0, fmt.Errorf("invalid chunk key %q (want spectral, hub, two_hop or minhash)", s)
}

// SignatureParams configure Signature.
type SignatureParams struct {
	// Seed derives the MinHash functions and the spectral start values.
	// Optional; default 0.
	Seed int64
	// Key leads the sort key. Optional; default KeySpectral.
	Key Key
	// Iterations is the number of averaging rounds of KeySpectral.
	// Optional; default DefaultSpectralIterations (0 means default); at
	// least 1.
	Iterations int
}

func checkSignatureParams(p SignatureParams) error {
	switch {
	case p.Key < KeySpectral || p.Key > KeyMinHash:
		return fmt.Errorf("signature: invalid key %d", int(p.Key))
	case p.Iterations < 0 || p.Iterations > 1000:
		return fmt.Errorf("signature: %d spectral iterations, want 1..1000 (0 means the default %d)", p.Iterations, DefaultSpectralIterations)
	}
	return nil
}

// Signature turns a PCollection<Row> into a PCollection<SigRow> carrying
// each row's lsh.NumHashes MinHash values behind the leading key.
func Signature(s beam.Scope, rows beam.PCollection, params SignatureParams) beam.PCollection {
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
		return spectral(s, rows, params.Seed, it)
	case KeyHub:
		counts := beam.CombinePerKey(s, sumUint64, beam.ParDo(s, featureOnes, rows))
		hubKeys := beam.ParDo(s, hubKey, counts)
		return beam.ParDo(s, &signTwoHopFn{Seed: params.Seed}, rows, beam.SideInput{Input: hubKeys})
	case KeyTwoHop:
		colMin := beam.CombinePerKey(s, minUint64, beam.ParDo(s, featureUserHashes, rows))
		return beam.ParDo(s, &signTwoHopFn{Seed: params.Seed}, rows, beam.SideInput{Input: colMin})
	}
	return beam.ParDo(s, &signFn{Seed: params.Seed}, rows)
}

// featureOnes emits (feature, 1) for every entry.
func featureOnes(r Row, emit func(int64, uint64)) {
	for _, f := range r.Features {
		emit(int64(f), 1)
	}
}

func sumUint64(a, b uint64) uint64 { return a + b }

// hubKey orders features by descending count, ties by a hash of the id.
func hubKey(f int64, count uint64) (int64, uint64) {
	c := min(count, math.MaxUint32)
	return f, (math.MaxUint32-c)<<32 | lsh.Mix64(uint64(f))>>32
}

type signFn struct {
	Seed int64 `json:"seed"`
	h    *lsh.Hasher
}

func (fn *signFn) ProcessElement(r Row, emit func(SigRow)) {
	if fn.h == nil {
		fn.h = lsh.New(fn.Seed)
	}
	emit(SigRow{Sig: fn.h.Sign(r.Features), Row: r})
}

// hopHash is the user hash the two-hop key minimises. It must be
// independent of userHash, which picks the boundary sample: a row's own
// user is in its two-hop neighbourhood, so with one hash every sampled row
// would also get a tiny key and the boundaries would all crowd at the start.
func hopHash(user string) uint64 { return lsh.Mix64(userHash(user) ^ 0x6A09E667F3BCC908) }

// featureUserHashes emits (feature, hopHash of the user) for every entry.
func featureUserHashes(r Row, emit func(int64, uint64)) {
	h := hopHash(r.User)
	for _, f := range r.Features {
		emit(int64(f), h)
	}
}

func minUint64(a, b uint64) uint64 { return min(a, b) }

// signTwoHopFn prefixes each signature with the least per-feature key of
// the row (two-hop: least user hash per feature; hub: hubKey).
type signTwoHopFn struct {
	Seed   int64 `json:"seed"`
	h      *lsh.Hasher
	colMin map[uint32]uint64
}

func (fn *signTwoHopFn) ProcessElement(r Row, colMin func(*int64, *uint64) bool, emit func(SigRow)) {
	if fn.h == nil {
		fn.h = lsh.New(fn.Seed)
	}
	if fn.colMin == nil {
		fn.colMin = map[uint32]uint64{}
		var f int64
		var v uint64
		for colMin(&f, &v) {
			fn.colMin[uint32(f)] = v
		}
	}
	hop := uint64(math.MaxUint64)
	for _, f := range r.Features {
		if v, ok := fn.colMin[f]; ok && v < hop {
			hop = v
		}
	}
	emit(SigRow{Lead: hop, Sig: fn.h.Sign(r.Features), Row: r})
}
