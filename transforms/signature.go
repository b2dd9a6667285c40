package transforms

import (
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

// SignatureParams configure Signature.
type SignatureParams struct {
	// Seed derives the MinHash functions. Optional; default 0.
	Seed int64
	// TwoHop adds a leading sort key: the least user hash over all users
	// that share a feature with the row (a MinHash of the row's two-hop
	// neighbourhood). Rows of one community then share that key far more
	// often than they share a one-hop MinHash, so fewer similar rows are
	// cut apart by chunk boundaries. It costs one shuffle of (feature,
	// hash) pairs and a side input of one value per distinct feature.
	// Optional; default false.
	TwoHop bool
	// Hub leads the sort key with the row's most frequent feature (ties by
	// a hash of the id), so rows sharing a popular feature sit together.
	// Same cost as TwoHop; exclusive with it. Optional; default false.
	Hub bool
}

// Signature turns a PCollection<Row> into a PCollection<SigRow> carrying
// each row's lsh.NumHashes MinHash values (and with TwoHop the two-hop key).
func Signature(s beam.Scope, rows beam.PCollection, params SignatureParams) beam.PCollection {
	s = s.Scope("Signature")
	switch {
	case params.Hub:
		counts := beam.CombinePerKey(s, sumUint64, beam.ParDo(s, featureOnes, rows))
		hubKeys := beam.ParDo(s, hubKey, counts)
		return beam.ParDo(s, &signTwoHopFn{Seed: params.Seed}, rows, beam.SideInput{Input: hubKeys})
	case params.TwoHop:
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
	emit(SigRow{Hop: hop, Sig: fn.h.Sign(r.Features), Row: r})
}
