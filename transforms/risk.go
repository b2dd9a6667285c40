package transforms

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/smoothanon/smoothanon/matrix"
)

// TopExposing is how many features RiskCounts.Exposing keeps.
const TopExposing = 10

// RiskParams configure Risk.
type RiskParams struct {
	// Ks are the k to count the rows below. Required: at least one.
	Ks []int
	// Path is where Risk writes its RiskCounts, as JSON: a file or
	// object every worker can reach. Required.
	Path string
}

// RiskCounts is the exact risk of a job's rows, as Risk writes it: the
// counts assess.RiskOf makes of the same rows. A row without features
// holds the empty set, like any other set.
type RiskCounts struct {
	// Rows and Entries count the rows and their entries; Features the
	// distinct features they hold.
	Rows, Entries, Features int64
	// Degrees counts rows by their number of features d, at bits.Len(d).
	Degrees []int64
	// Unique counts the rows whose feature set no other row holds.
	Unique int64
	// Below[i] counts the rows whose feature set fewer than Ks[i] rows
	// hold (themselves included).
	Below []int64
	// Exposing are the features whose removal would make the most unique
	// rows non-unique (a unique row r holding f is made non-unique when
	// another row holds exactly r without f), most first, then by id, at
	// most TopExposing.
	Exposing []RiskFeature
}

// RiskFeature is a feature and a count of rows.
type RiskFeature struct {
	Feature uint32
	Rows    int64
}

func init() {
	register.DoFn2x0[matrix.Matrix, func(string, int64)](&setsFn{})
	register.Emitter2[string, int64]()
	register.DoFn4x0[string, int64, func(RiskCounts), func(string, int64)](&setRiskFn{})
	register.Emitter1[RiskCounts]()
	register.Combiner3[probeAcc, int64, []uint32](&probeFn{})
	register.Function3x0(exposedFeatures)
	register.Emitter2[uint32, int64]()
	register.Function2x1(exposingPart)
	register.Function3x0(featuresOfSet)
	register.Function2x1(featurePart)
	register.Function2x1(mergeRisk)
	register.DoFn3x1[context.Context, []byte, RiskCounts, error](&writeRiskFn{})
}

// Risk counts, over every row of blocks, what assess's risk reports
// (RiskCounts), and writes the counts to p.Path. Rows with the same feature
// set are found by the set itself, not a hash of it: the counts are exact.
// Only the probes for Exposing ("does a row hold exactly r without f?")
// meet by a 128-bit hash of the set (SHA-256, truncated). Its shuffles
// carry each row's set once and each unique row's features once more, and
// no worker holds more than one set's rows' count, or one probed set's
// probes, at a time.
func Risk(s beam.Scope, blocks beam.PCollection, p RiskParams) {
	s = s.Scope("Risk")
	if len(p.Ks) == 0 || p.Path == "" {
		panic(fmt.Sprintf("transforms.Risk: want Ks and Path, got %+v", p))
	}
	sets := stats.SumPerKey(s, beam.ParDo(s, &setsFn{}, blocks))
	parts, probes := beam.ParDo2(s, &setRiskFn{Ks: p.Ks}, sets)
	exposed := beam.ParDo(s, exposedFeatures, beam.CombinePerKey(s, &probeFn{}, probes))
	exposing := beam.ParDo(s, exposingPart, stats.SumPerKey(s, exposed))
	features := beam.ParDo(s, featurePart, stats.SumPerKey(s, beam.ParDo(s, featuresOfSet, sets)))
	total := beam.Combine(s, mergeRisk, beam.Flatten(s, parts, exposing, features))
	beam.ParDo0(s, &writeRiskFn{Path: p.Path}, beam.Impulse(s), beam.SideInput{Input: total})
}

// setsFn emits each row's feature set (encSet) with a count of 1.
type setsFn struct{}

func (*setsFn) ProcessElement(b matrix.Matrix, emit func(string, int64)) {
	for i := range b.NumRows() {
		emit(encSet(b.Row(i), -1), 1)
	}
}

// encSet is feats, without feats[skip] (skip < 0: none), as a key.
func encSet(feats []uint32, skip int) string {
	var e enc
	if skip >= 0 {
		feats = slices.Delete(slices.Clone(feats), skip, skip+1)
	}
	e.feats(feats)
	return string(e.b)
}

func decSet(key string) []uint32 {
	d := dec{b: []byte(key)}
	f := d.feats()
	if d.err != nil {
		panic(fmt.Sprintf("transforms.Risk: a set key that does not decode: %v", d.err))
	}
	return f
}

// probeKey is the 128-bit hash of a set key that probes meet by.
func probeKey(set string) string {
	h := sha256.Sum256([]byte(set))
	return string(h[:16])
}

// setRiskFn turns each set and its rows into their counts, and emits the
// set's presence (-1) and, for a unique set, a probe for each feature
// (the feature, at the set without it).
type setRiskFn struct {
	Ks []int
}

func (fn *setRiskFn) ProcessElement(set string, n int64, emit func(RiskCounts), probe func(string, int64)) {
	feats := decSet(set)
	c := RiskCounts{Rows: n, Entries: n * int64(len(feats)), Degrees: make([]int64, bits.Len(uint(len(feats)))+1),
		Below: make([]int64, len(fn.Ks))}
	c.Degrees[len(c.Degrees)-1] = n
	for i, k := range fn.Ks {
		if n < int64(k) {
			c.Below[i] = n
		}
	}
	probe(probeKey(set), -1)
	if n == 1 {
		c.Unique = 1
		for j, f := range feats {
			probe(probeKey(encSet(feats, j)), int64(f))
		}
	}
	emit(c)
}

// probeAcc gathers one probed set's probes: whether a row holds the set,
// and the features of the unique rows one feature away from it.
type probeAcc struct {
	Present  bool
	Features []uint32
}

// probeFn combines a probed set's presence and probes.
type probeFn struct{}

func (*probeFn) CreateAccumulator() probeAcc { return probeAcc{} }

func (*probeFn) AddInput(a probeAcc, v int64) probeAcc {
	if v < 0 {
		a.Present = true
	} else {
		a.Features = append(a.Features, uint32(v))
	}
	return a
}

func (*probeFn) MergeAccumulators(a, b probeAcc) probeAcc {
	a.Present = a.Present || b.Present
	a.Features = append(a.Features, b.Features...)
	return a
}

// ExtractOutput is the features whose removal made a unique row into
// this present set: none when no row holds it.
func (*probeFn) ExtractOutput(a probeAcc) []uint32 {
	if !a.Present {
		return nil
	}
	return a.Features
}

func exposedFeatures(_ string, feats []uint32, emit func(uint32, int64)) {
	for _, f := range feats {
		emit(f, 1)
	}
}

func exposingPart(f uint32, n int64) RiskCounts {
	return RiskCounts{Exposing: []RiskFeature{{f, n}}}
}

func featuresOfSet(set string, _ int64, emit func(uint32, int64)) {
	for _, f := range decSet(set) {
		emit(f, 1)
	}
}

func featurePart(uint32, int64) RiskCounts { return RiskCounts{Features: 1} }

// mergeRisk adds b to a; Exposing keeps the TopExposing largest, which is
// exact because every feature enters the merge once, with its total.
func mergeRisk(a, b RiskCounts) RiskCounts {
	a.Rows += b.Rows
	a.Entries += b.Entries
	a.Features += b.Features
	a.Unique += b.Unique
	a.Degrees = addCounts(a.Degrees, b.Degrees)
	a.Below = addCounts(a.Below, b.Below)
	a.Exposing = append(slices.Clone(a.Exposing), b.Exposing...)
	slices.SortFunc(a.Exposing, func(x, y RiskFeature) int {
		return cmp.Or(cmp.Compare(y.Rows, x.Rows), cmp.Compare(x.Feature, y.Feature))
	})
	a.Exposing = a.Exposing[:min(len(a.Exposing), TopExposing)]
	return a
}

// addCounts adds b to a element by element, the shorter padded with 0.
func addCounts(a, b []int64) []int64 {
	out := make([]int64, max(len(a), len(b)))
	copy(out, a)
	for i, v := range b {
		out[i] += v
	}
	return out
}

type writeRiskFn struct {
	Path string `json:"path"`
}

func (fn *writeRiskFn) ProcessElement(ctx context.Context, _ []byte, c RiskCounts) error {
	return writeJSON(ctx, fn.Path, c)
}
