package transforms

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"iter"
	"maps"
	"math"
	"math/bits"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

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
	// Shards is how many shards the sets and probes are split into
	// (RiskShards of the input's rows). Optional; default 1.
	Shards int
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

// maxBatchSets bounds the distinct sets a bundle counts before it emits
// them (checked after each block, so one block more): what a bundle
// holds stays bounded whatever its rows.
const maxBatchSets = 1 << 18

// RiskShards is the number of shards Risk splits the sets and probes of
// an input of rows rows into: about sqrt(rows/100), so that a batch (one
// shard's elements bound for another) holds about 100 sets, and a shard
// about 10 sqrt(rows) of them (3e5 at 1e9 rows); at least 1, at most
// 4,096.
func RiskShards(rows int64) int {
	return min(max(int(math.Ceil(math.Sqrt(float64(rows)/100))), 1), 4096)
}

func init() {
	register.DoFn2x0[matrix.Matrix, func(int, []byte)](&setBatchFn{})
	register.Emitter2[int, []byte]()
	register.Iter1[[]byte]()
	register.DoFn5x1[int, func(*[]byte) bool, func(RiskCounts), func(int, []byte), func(int, []byte), error](&setShardFn{})
	register.Emitter1[RiskCounts]()
	register.DoFn3x1[int, func(*[]byte) bool, func(int, []byte), error](&probeShardFn{})
	register.Function2x2(exposingBlock)
	register.Function2x2(featureBlock)
	register.Function2x1(mergeRisk)
	register.DoFn3x1[context.Context, []byte, RiskCounts, error](&writeRiskFn{})
}

// Risk counts, over every row of blocks, what assess's risk reports
// (RiskCounts), and writes the counts to p.Path. Rows with the same feature
// set are found by the set itself, not a hash of it: the counts are exact.
// Only the probes for Exposing ("does a row hold exactly r without f?")
// meet by a 128-bit hash of the set (SHA-256, truncated).
//
// Everything crosses its shuffle in batches, never an element per row or
// per probe: each bundle counts its sets and sends them in batches to
// p.Shards shards by a hash of the set; a shard counts its sets' rows and
// sends each set's presence and each unique row's probes in batches to
// the probe shards; features and their exposing counts go in blocks of
// 4,096 feature ids. A worker holds a bundle's distinct sets (at most
// maxBatchSets, and one block more), one shard's sets or probes (about
// rows/Shards sets, and a probe per feature of their unique rows), or one
// block of features.
func Risk(s beam.Scope, blocks beam.PCollection, p RiskParams) {
	s = s.Scope("Risk")
	if len(p.Ks) == 0 || p.Path == "" || p.Shards < 0 {
		panic(fmt.Sprintf("transforms.Risk: want Ks, Path and Shards >= 0, got %+v", p))
	}
	shards := cmp.Or(p.Shards, 1)
	sets := beam.ParDo(s, &setBatchFn{Shards: shards}, blocks)
	parts, probes, feats := beam.ParDo3(s, &setShardFn{Ks: p.Ks, Shards: shards}, beam.GroupByKey(s, sets))
	exposed := beam.ParDo(s, &probeShardFn{}, beam.GroupByKey(s, probes))
	exposing := beam.ParDo(s, exposingBlock, beam.GroupByKey(s, exposed))
	features := beam.ParDo(s, featureBlock, beam.GroupByKey(s, feats))
	total := beam.Combine(s, mergeRisk, beam.Flatten(s, parts, exposing, features))
	beam.ParDo0(s, &writeRiskFn{Path: p.Path}, beam.Impulse(s), beam.SideInput{Input: total})
}

// setBatchFn counts a bundle's rows by feature set (encSet) and emits the
// counts in batches, one per shard of the set's hash: (set, rows) pairs.
type setBatchFn struct {
	Shards int
	counts map[string]int64
}

func (fn *setBatchFn) ProcessElement(b matrix.Matrix, emit func(int, []byte)) {
	if fn.counts == nil {
		fn.counts = make(map[string]int64)
	}
	for i := range b.NumRows() {
		fn.counts[encSet(b.Row(i), -1)]++
	}
	if len(fn.counts) >= maxBatchSets {
		fn.flush(emit)
	}
}

func (fn *setBatchFn) FinishBundle(emit func(int, []byte)) { fn.flush(emit) }

func (fn *setBatchFn) flush(emit func(int, []byte)) {
	batches := make([]enc, fn.Shards)
	for set, n := range fn.counts {
		e := &batches[setShard(set, fn.Shards)]
		e.str(set)
		e.uvarint(uint64(n))
	}
	for i, e := range batches {
		if len(e.b) > 0 {
			emit(i, e.b)
		}
	}
	clear(fn.counts)
}

// setShard is the shard of a set key.
func setShard(set string, shards int) int {
	h := fnv.New64a()
	h.Write([]byte(set))
	return int(h.Sum64() % uint64(shards))
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

func decSet(key string) ([]uint32, error) {
	d := dec{b: []byte(key)}
	f := d.feats()
	return f, d.done("a set key")
}

// probeLen is the length of a probe's hash.
const probeLen = 16

// probeKey is the 128-bit hash of a set key that probes meet by.
func probeKey(set string) [probeLen]byte {
	h := sha256.Sum256([]byte(set))
	return [probeLen]byte(h[:probeLen])
}

// setShardFn counts one shard's sets: it emits their RiskCounts, each
// set's presence and, for a unique set, a probe for each feature (the
// feature, at the set without it) in batches by probe shard (hash,
// feature + 1, or 0 for presence), and their distinct features in blocks
// of 2^blockBits ids.
type setShardFn struct {
	Ks     []int
	Shards int
}

func (fn *setShardFn) ProcessElement(_ int, batches func(*[]byte) bool, emit func(RiskCounts), probe func(int, []byte), feat func(int, []byte)) error {
	counts := map[string]int64{}
	var b []byte
	for batches(&b) {
		d := dec{b: b}
		for len(d.b) > 0 && d.err == nil {
			set := d.str()
			counts[set] += int64(d.uvarint())
		}
		if err := d.done("a batch of sets"); err != nil {
			return err
		}
	}
	c := RiskCounts{Below: make([]int64, len(fn.Ks))}
	probes := make([]enc, fn.Shards)
	addProbe := func(set string, v uint64) {
		h := probeKey(set)
		e := &probes[binary.LittleEndian.Uint64(h[:8])%uint64(fn.Shards)]
		e.b = append(e.b, h[:]...)
		e.uvarint(v)
	}
	held := map[uint32]bool{}
	for set, n := range counts {
		feats, err := decSet(set)
		if err != nil {
			return err
		}
		c.Rows += n
		c.Entries += n * int64(len(feats))
		d := bits.Len(uint(len(feats)))
		if len(c.Degrees) <= d {
			c.Degrees = append(c.Degrees, make([]int64, d+1-len(c.Degrees))...)
		}
		c.Degrees[d] += n
		for i, k := range fn.Ks {
			if n < int64(k) {
				c.Below[i] += n
			}
		}
		addProbe(set, 0)
		if n == 1 {
			c.Unique++
			for j, f := range feats {
				addProbe(encSet(feats, j), uint64(f)+1)
			}
		}
		for _, f := range feats {
			held[f] = true
		}
	}
	emit(c)
	for i, e := range probes {
		if len(e.b) > 0 {
			probe(i, e.b)
		}
	}
	for blk, fs := range featureBlocks(slices.Sorted(maps.Keys(held))) {
		var e enc
		e.feats(fs)
		feat(blk, e.b)
	}
	return nil
}

// featureBlocks yields sorted features in runs of one block of
// 2^blockBits ids, with the block.
func featureBlocks(fs []uint32) iter.Seq2[int, []uint32] {
	return func(yield func(int, []uint32) bool) {
		for len(fs) > 0 {
			blk := fs[0] >> blockBits
			n := 1
			for n < len(fs) && fs[n]>>blockBits == blk {
				n++
			}
			if !yield(int(blk), fs[:n]) {
				return
			}
			fs = fs[n:]
		}
	}
}

// probeShardFn meets one probe shard's presences and probes: for each
// feature, the unique rows whose removal of it makes a present set,
// emitted in blocks of 2^blockBits ids as (feature, rows) pairs.
type probeShardFn struct{}

func (*probeShardFn) ProcessElement(_ int, batches func(*[]byte) bool, emit func(int, []byte)) error {
	type probe struct {
		h [probeLen]byte
		f uint32
	}
	present := map[[probeLen]byte]bool{}
	var probes []probe
	var b []byte
	for batches(&b) {
		d := dec{b: b}
		for len(d.b) > 0 && d.err == nil {
			if len(d.b) < probeLen {
				d.err = errShort
				break
			}
			h := [probeLen]byte(d.b[:probeLen])
			d.b = d.b[probeLen:]
			if v := d.uvarint(); v == 0 {
				present[h] = true
			} else {
				probes = append(probes, probe{h, uint32(v - 1)})
			}
		}
		if err := d.done("a batch of probes"); err != nil {
			return err
		}
	}
	exposed := map[uint32]int64{}
	for _, p := range probes {
		if present[p.h] {
			exposed[p.f]++
		}
	}
	for blk, fs := range featureBlocks(slices.Sorted(maps.Keys(exposed))) {
		var e enc
		for _, f := range fs {
			e.uvarint(uint64(f))
			e.uvarint(uint64(exposed[f]))
		}
		emit(blk, e.b)
	}
	return nil
}

// exposingBlock sums one block's exposing counts and keeps the
// TopExposing largest (exact: the block holds every count of its
// features).
func exposingBlock(_ int, batches func(*[]byte) bool) (RiskCounts, error) {
	rows := map[uint32]int64{}
	var b []byte
	for batches(&b) {
		d := dec{b: b}
		for len(d.b) > 0 && d.err == nil {
			f := uint32(d.uvarint())
			rows[f] += int64(d.uvarint())
		}
		if err := d.done("a batch of exposing counts"); err != nil {
			return RiskCounts{}, err
		}
	}
	var c RiskCounts
	for f, n := range rows {
		c.Exposing = append(c.Exposing, RiskFeature{f, n})
	}
	return mergeRisk(c, RiskCounts{}), nil
}

// featureBlock counts one block's distinct features.
func featureBlock(_ int, batches func(*[]byte) bool) (RiskCounts, error) {
	held := map[uint32]bool{}
	var b []byte
	for batches(&b) {
		d := dec{b: b}
		for _, f := range d.feats() {
			held[f] = true
		}
		if err := d.done("a batch of features"); err != nil {
			return RiskCounts{}, err
		}
	}
	return RiskCounts{Features: int64(len(held))}, nil
}

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
