package transforms

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

func TestClassAccCoder(t *testing.T) {
	c := ClassAcc{Rows: 5, Out: []uint32{1, 4}, Hits: []int64{5, 2}, Collisions: 1}
	if got, err := decClassAcc(encClassAcc(c)); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("ClassAcc %+v -> %+v, %v", c, got, err)
	}
}

func TestJudgeClass(t *testing.T) {
	a := ClassAcc{Rows: 1, Out: []uint32{1, 2}, Hits: []int64{1, 0}}
	b := ClassAcc{Rows: 1, Out: []uint32{1, 2}, Hits: []int64{1, 1}}
	m := mergeClass(mergeClass(a, b), ClassAcc{Rows: 2, Out: []uint32{1, 2}, Hits: []int64{0, 0}})
	if m.Rows != 4 || !reflect.DeepEqual(m.Hits, []int64{2, 1}) {
		t.Fatalf("merged %+v", m)
	}
	var st Stats
	judgeClass(&st, m, 4, matrix.Smooth)
	// feature 1 held by 2 of 4 (a tie is fine), feature 2 by 1 of 4 (violation).
	if st.Classes != 1 || st.SmallClasses != 0 || st.MajorityViolations != 1 || len(st.Problems) != 1 {
		t.Errorf("smooth: %+v", st)
	}
	st = Stats{}
	judgeClass(&st, m, 5, matrix.NonSmooth)
	if st.SmallClasses != 1 || st.MajorityViolations != 0 {
		t.Errorf("nonsmooth k=5: %+v", st)
	}
	coll := mergeClass(a, ClassAcc{Rows: 3, Out: []uint32{9}, Hits: []int64{3}})
	if coll.Rows != 1 || coll.Collisions != 3 {
		t.Errorf("collision merge %+v", coll)
	}
}

// TestVerifyBlocks accumulates classes over blocks and bundles: the
// merged class blocks must not depend on how rows were bundled, and
// utility is counted per row.
func TestVerifyBlocks(t *testing.T) {
	in := blockOf(testRow{"a", []uint32{1, 2}}, testRow{"b", []uint32{1}}, testRow{"c", []uint32{2, 3}}, testRow{"d", nil})
	out := blockOf(testRow{"a", []uint32{1, 2}}, testRow{"b", []uint32{1, 2}}, testRow{"c", []uint32{2}}, testRow{"d", []uint32{2}})
	run := func(blocks ...OutBlock) (map[int64]classBlock, Stats) {
		fn := &verifyBlockFn{}
		got := map[int64]classBlock{}
		var st Stats
		emitClass := func(k int64, b classBlock) {
			if old, ok := got[k]; ok {
				b = mergeClassBlocks(old, b)
			}
			got[k] = b
		}
		for _, b := range blocks {
			fn.ProcessElement(context.Background(), b, emitClass, nil)
			fn.FinishBundle(emitClass, func(s Stats) { st = mergeStats(st, s) })
		}
		return got, st
	}
	whole, st := run(OutBlock{In: in, Out: out})
	split, st2 := run(OutBlock{In: slice(&in, 0, 1), Out: slice(&out, 0, 1)}, OutBlock{In: slice(&in, 1, 4), Out: slice(&out, 1, 4)})
	if !reflect.DeepEqual(whole, split) || !reflect.DeepEqual(st, st2) {
		t.Errorf("bundling changed the classes: %+v vs %+v; %+v vs %+v", whole, split, st, st2)
	}
	if st.Rows != 4 || st.EntriesIn != 5 || st.EntriesOut != 6 || st.Kept != 4 || st.Created != 2 {
		t.Errorf("row stats %+v", st)
	}
	var classes []ClassAcc
	for _, b := range whole {
		classes = append(classes, b.Acc...)
	}
	slices.SortFunc(classes, func(x, y ClassAcc) int { return len(x.Out) - len(y.Out) })
	want := []ClassAcc{{Rows: 2, Out: []uint32{2}, Hits: []int64{1}}, {Rows: 2, Out: []uint32{1, 2}, Hits: []int64{2, 1}}}
	if !reflect.DeepEqual(classes, want) {
		t.Errorf("classes %+v, want %+v", classes, want)
	}
}
