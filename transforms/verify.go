package transforms

import (
	"encoding/binary"
	"fmt"
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
}

func checkVerifyParams(p VerifyParams) error {
	return verify.CheckParams(verify.Params{K: p.K, Mode: p.Mode})
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

func init() {
	beam.RegisterCoder(reflect.TypeOf(ClassAcc{}), encClassAcc, decClassAcc)
	register.DoFn3x0[OutRow, func([]byte, ClassAcc), func(Stats)](&verifyRowFn{})
	register.Emitter2[[]byte, ClassAcc]()
	register.Function2x1(mergeClass)
	register.DoFn3x0[[]byte, ClassAcc, func(Stats)](&classStatsFn{})
}

func encClassAcc(c ClassAcc) []byte {
	e := enc{b: make([]byte, 0, 8+3*len(c.Out))}
	e.uvarint(uint64(c.Rows))
	e.uvarint(uint64(c.Collisions))
	e.feats(c.Out)
	for _, h := range c.Hits {
		e.uvarint(uint64(h))
	}
	return e.b
}

func decClassAcc(b []byte) (ClassAcc, error) {
	d := dec{b: b}
	c := ClassAcc{Rows: int64(d.uvarint()), Collisions: int64(d.uvarint()), Out: d.feats()}
	c.Hits = make([]int64, len(c.Out))
	for i := range c.Hits {
		c.Hits[i] = int64(d.uvarint())
	}
	return c, d.done("ClassAcc")
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

// Verify checks a PCollection<OutRow> globally and returns a
// PCollection<Stats> (several elements; merge with CombineStats). Output
// rows are grouped into classes by verify.RowHash of their features across
// all chunks; each class must hold at least K users, and in smooth mode
// each of its features must have been held in the input by at least half
// of its users; nonsmooth releases may create no entry. Utility (kept,
// suppressed, created entries) is summed per row.
func Verify(s beam.Scope, rows beam.PCollection, params VerifyParams) beam.PCollection {
	s = s.Scope("Verify")
	if err := checkVerifyParams(params); err != nil {
		panic(err)
	}
	keyed, rowStats := beam.ParDo2(s, &verifyRowFn{}, rows)
	classes := beam.CombinePerKey(s, mergeClass, keyed)
	classStats := beam.ParDo(s, &classStatsFn{K: int64(params.K), Mode: int(params.Mode)}, classes)
	return beam.Flatten(s, rowStats, classStats)
}

// classKey is the 16-byte RowHash of an output row.
func classKey(out []uint32) []byte {
	h := verify.RowHash(out)
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 16), h[0])
	return binary.BigEndian.AppendUint64(k, h[1])
}

// verifyRowFn keys each row by its class and sums row-level utility per
// bundle (acc starts zero and FinishBundle resets it).
type verifyRowFn struct {
	acc Stats
}

func (fn *verifyRowFn) ProcessElement(r OutRow, emitClass func([]byte, ClassAcc), _ func(Stats)) {
	hits := make([]int64, len(r.Out))
	kept := 0
	i := 0
	for j, f := range r.Out {
		for i < len(r.In) && r.In[i] < f {
			i++
		}
		if i < len(r.In) && r.In[i] == f {
			hits[j] = 1
			kept++
		}
	}
	fn.acc.Rows++
	fn.acc.EntriesIn += int64(len(r.In))
	fn.acc.EntriesOut += int64(len(r.Out))
	fn.acc.Kept += int64(kept)
	fn.acc.Created += int64(len(r.Out) - kept)
	emitClass(classKey(r.Out), ClassAcc{Rows: 1, Out: r.Out, Hits: hits})
}

func (fn *verifyRowFn) FinishBundle(_ func([]byte, ClassAcc), emit func(Stats)) {
	if fn.acc.Rows > 0 {
		emit(fn.acc)
	}
	fn.acc = Stats{}
}

// classStatsFn judges each class and sums the verdicts per bundle.
type classStatsFn struct {
	K    int64 `json:"k"`
	Mode int   `json:"mode"`
	acc  Stats
}

func (fn *classStatsFn) ProcessElement(_ []byte, c ClassAcc, _ func(Stats)) {
	judgeClass(&fn.acc, c, fn.K, matrix.Mode(fn.Mode))
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
