package transforms

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

// VerifyParams configure Verify.
type VerifyParams struct {
	// K is the least class size. Required; >= 2.
	K int
	// Mode is smooth (majority rule) or nonsmooth (no created entry).
	// Optional; default matrix.Smooth.
	Mode matrix.Mode
	// Sensitive is the sensitive rule the release must follow too.
	// Optional; default nil (none).
	Sensitive *SensitiveRule
}

func checkVerifyParams(p VerifyParams) error {
	if err := verify.CheckParams(verify.Params{K: p.K, Mode: p.Mode}); err != nil {
		return err
	}
	return p.Sensitive.check(p.K)
}

// ClassAcc accumulates one equivalence class (users with identical output
// rows): its size, its output row, and for each output feature how many of
// its users held it in the input.
type ClassAcc struct {
	Rows       int64
	Out        []uint32
	Hits       []int64
	Collisions int64 // rows whose output differed though the hash matched
}

// classBlock holds the accumulators of some classes, sorted by class
// hash, all of whose hashes share their top classBits bits (the block's
// key). Like featBlock, it lets a bundle's classes cross the shuffle in a
// few thousand elements instead of one per class.
type classBlock struct {
	Hash [][2]uint64
	Acc  []ClassAcc
}

// classBits sets the number of class blocks: 2^classBits.
const classBits = 12

// maxBundleClasses bounds the classes a bundle holds before it emits them.
const maxBundleClasses = 1 << 18

func init() {
	beam.RegisterCoder(reflect.TypeOf(classBlock{}), encClassBlock, decClassBlock)
	register.DoFn4x1[context.Context, OutBlock, func(int64, classBlock), func(Stats), error](&verifyBlockFn{})
	register.Emitter2[int64, classBlock]()
	register.Function2x1(mergeClassBlocks)
	register.DoFn4x1[context.Context, int64, classBlock, func(Stats), error](&classStatsFn{})
}

func (e *enc) classAcc(c ClassAcc) {
	e.uvarint(uint64(c.Rows))
	e.uvarint(uint64(c.Collisions))
	e.feats(c.Out)
	for _, h := range c.Hits {
		e.uvarint(uint64(h))
	}
}

func (d *dec) classAcc() ClassAcc {
	c := ClassAcc{Rows: int64(d.uvarint()), Collisions: int64(d.uvarint()), Out: d.feats()}
	c.Hits = make([]int64, len(c.Out))
	for i := range c.Hits {
		c.Hits[i] = int64(d.uvarint())
	}
	return c
}

func encClassAcc(c ClassAcc) []byte {
	e := enc{b: make([]byte, 0, 8+3*len(c.Out))}
	e.classAcc(c)
	return e.b
}

func decClassAcc(b []byte) (ClassAcc, error) {
	d := dec{b: b}
	c := d.classAcc()
	return c, d.done("ClassAcc")
}

func encClassBlock(b classBlock) []byte {
	e := enc{b: make([]byte, 0, 40*len(b.Hash))}
	e.uvarint(uint64(len(b.Hash)))
	for i, h := range b.Hash {
		e.u64(h[0])
		e.u64(h[1])
		e.classAcc(b.Acc[i])
	}
	return e.b
}

func decClassBlock(p []byte) (classBlock, error) {
	d := dec{b: p}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b))/16 {
		d.err = errShort
	}
	var b classBlock
	for i := uint64(0); i < n && d.err == nil; i++ {
		b.Hash = append(b.Hash, [2]uint64{d.u64(), d.u64()})
		b.Acc = append(b.Acc, d.classAcc())
	}
	return b, d.done("classBlock")
}

// mergeClassBlocks merges two blocks of the same key class by class.
func mergeClassBlocks(a, b classBlock) classBlock {
	var out classBlock
	i, j := 0, 0
	for i < len(a.Hash) || j < len(b.Hash) {
		switch {
		case j == len(b.Hash) || i < len(a.Hash) && lessPair(a.Hash[i], b.Hash[j]):
			out.Hash, out.Acc = append(out.Hash, a.Hash[i]), append(out.Acc, a.Acc[i])
			i++
		case i == len(a.Hash) || lessPair(b.Hash[j], a.Hash[i]):
			out.Hash, out.Acc = append(out.Hash, b.Hash[j]), append(out.Acc, b.Acc[j])
			j++
		default:
			out.Hash, out.Acc = append(out.Hash, a.Hash[i]), append(out.Acc, mergeClass(a.Acc[i], b.Acc[j]))
			i++
			j++
		}
	}
	return out
}

// mergeClass merges two accumulators of the same class hash.
func mergeClass(a, b ClassAcc) ClassAcc {
	if a.Rows == 0 {
		return b
	}
	if b.Rows == 0 {
		return a
	}
	if !slices.Equal(a.Out, b.Out) {
		// Equal hashes, different rows: keep a's row, count b as colliding.
		a.Collisions += b.Rows + b.Collisions
		return a
	}
	hits := make([]int64, len(a.Hits))
	for i := range hits {
		hits[i] = a.Hits[i] + b.Hits[i]
	}
	return ClassAcc{Rows: a.Rows + b.Rows, Out: a.Out, Hits: hits, Collisions: a.Collisions + b.Collisions}
}

// Verify checks a PCollection<OutBlock> globally and returns a
// PCollection<Stats> (several elements; merge with CombineStats). Output
// rows are grouped into classes by verify.RowHash of their features across
// all chunks; each class must hold at least K users, and in smooth mode
// each of its features must have been held in the input by at least half
// of its users; nonsmooth releases may create no entry. Utility (kept,
// suppressed, created entries) is summed per row.
func Verify(s beam.Scope, blocks beam.PCollection, params VerifyParams) beam.PCollection {
	s = s.Scope("Verify")
	if err := checkVerifyParams(params); err != nil {
		panic(err)
	}
	keyed, rowStats := beam.ParDo2(s, &verifyBlockFn{Sensitive: params.Sensitive}, blocks)
	classes := beam.CombinePerKey(s, mergeClassBlocks, keyed)
	classStats := beam.ParDo(s, &classStatsFn{K: int64(params.K), Mode: int(params.Mode), Sensitive: params.Sensitive}, classes)
	return beam.Flatten(s, rowStats, classStats)
}

// verifyBlockFn sums row-level utility and accumulates classes per bundle
// (both start empty and FinishBundle emits and resets them).
type verifyBlockFn struct {
	Sensitive *SensitiveRule `json:"sensitive,omitempty"`
	acc       Stats
	classes   map[[2]uint64]*ClassAcc
}

func (fn *verifyBlockFn) ProcessElement(ctx context.Context, b OutBlock, emitClasses func(int64, classBlock), _ func(Stats)) error {
	if err := fn.Sensitive.resolve(ctx); err != nil {
		return err
	}
	if fn.classes == nil {
		fn.classes = map[[2]uint64]*ClassAcc{}
	}
	for i := range b.In.Users {
		in, out := b.In.Row(i), b.Out.Row(i)
		h := verify.RowHash(out)
		c := fn.classes[h]
		if c == nil {
			c = &ClassAcc{Out: slices.Clone(out), Hits: make([]int64, len(out))}
			fn.classes[h] = c
		}
		kept := 0
		if slices.Equal(c.Out, out) {
			c.Rows++
			kept = countHits(in, out, c.Hits)
		} else {
			c.Collisions++
			kept = countHits(in, out, nil)
		}
		fn.acc.Rows++
		fn.acc.EntriesIn += int64(len(in))
		fn.acc.EntriesOut += int64(len(out))
		fn.acc.Kept += int64(kept)
		fn.acc.Created += int64(len(out) - kept)
		fn.Sensitive.countRow(&fn.acc.Sensitive, in, out)
	}
	if len(fn.classes) >= maxBundleClasses {
		fn.flushClasses(emitClasses)
	}
	return nil
}

// countHits adds 1 to hits[j] for every out[j] that in holds (hits may be
// nil) and returns how many it holds.
func countHits(in, out []uint32, hits []int64) int {
	kept, i := 0, 0
	for j, f := range out {
		for i < len(in) && in[i] < f {
			i++
		}
		if i < len(in) && in[i] == f {
			if hits != nil {
				hits[j]++
			}
			kept++
		}
	}
	return kept
}

// flushClasses emits the bundle's classes in blocks and forgets them.
func (fn *verifyBlockFn) flushClasses(emit func(int64, classBlock)) {
	hs := slices.SortedFunc(maps.Keys(fn.classes), func(a, b [2]uint64) int {
		if lessPair(a, b) {
			return -1
		}
		if lessPair(b, a) {
			return 1
		}
		return 0
	})
	var b classBlock
	key := int64(-1)
	for _, h := range hs {
		if k := int64(h[0] >> (64 - classBits)); k != key {
			if key >= 0 {
				emit(key, b)
			}
			key, b = k, classBlock{}
		}
		b.Hash, b.Acc = append(b.Hash, h), append(b.Acc, *fn.classes[h])
	}
	if key >= 0 {
		emit(key, b)
	}
	fn.classes = nil
}

func (fn *verifyBlockFn) FinishBundle(emitClasses func(int64, classBlock), emit func(Stats)) {
	fn.flushClasses(emitClasses)
	if fn.acc.Rows > 0 {
		emit(fn.acc)
	}
	fn.acc = Stats{}
}

// classStatsFn judges each class and sums the verdicts per bundle.
type classStatsFn struct {
	K         int64          `json:"k"`
	Mode      int            `json:"mode"`
	Sensitive *SensitiveRule `json:"sensitive,omitempty"`
	acc       Stats
}

func (fn *classStatsFn) ProcessElement(ctx context.Context, _ int64, b classBlock, _ func(Stats)) error {
	if err := fn.Sensitive.resolve(ctx); err != nil {
		return err
	}
	for _, c := range b.Acc {
		judgeClass(&fn.acc, c, fn.K, matrix.Mode(fn.Mode))
		if line := fn.Sensitive.judge(&fn.acc.Sensitive, c); line != "" {
			fn.acc.problem(line)
		}
	}
	return nil
}

func (fn *classStatsFn) FinishBundle(emit func(Stats)) {
	if fn.acc.Classes > 0 {
		emit(fn.acc)
	}
	fn.acc = Stats{}
}

// judgeClass adds one class's size and violations to st.
func judgeClass(st *Stats, c ClassAcc, k int64, mode matrix.Mode) {
	st.Classes++
	st.ClassSize.Add(c.Rows)
	if c.Rows < k {
		st.SmallClasses++
		st.problem(fmt.Sprintf("class of %d users < k=%d (output row of %d features)", c.Rows, k, len(c.Out)))
	}
	if c.Collisions > 0 {
		st.HashCollisions += c.Collisions
		st.problem(fmt.Sprintf("%d rows share a class hash with a different output row", c.Collisions))
	}
	if mode == matrix.Smooth {
		bad := 0
		for _, h := range c.Hits {
			if 2*h < c.Rows {
				bad++
			}
		}
		if bad > 0 {
			st.MajorityViolations += int64(bad)
			st.problem(fmt.Sprintf("class of %d users: %d features held originally by fewer than half", c.Rows, bad))
		}
	}
}
