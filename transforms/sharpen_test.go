package transforms

import (
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/smoothanon/smoothanon/lsh"
)

func TestSharpen(t *testing.T) {
	// Three chunks: lead < 100, [100, 200), >= 200.
	b := Bounds{Keys: [][]byte{sortKey(100, 0, lsh.Signature{}, ""), sortKey(200, 0, lsh.Signature{}, "")}}
	sc, err := sharpenScale(3)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		user  string
		lead  uint64
		feats []uint32
	}
	r := func(user string, lead uint64, feats ...uint32) row { return row{user, lead, feats} }
	in := []row{
		// Feature 1: three rows in chunk 0 and b in chunk 1.
		r("a1", 10, 1), r("a2", 20, 1), r("a3", 30, 1, 9),
		r("b", 150, 1),
		// Feature 2: ten rows in chunk 0 and e in chunk 2.
		r("d0", 40, 2), r("d1", 41, 2), r("d2", 42, 2), r("d3", 43, 2), r("d4", 44, 2),
		r("d5", 45, 2), r("d6", 46, 2), r("d7", 47, 2), r("d8", 48, 2), r("d9", 49, 2),
		r("e", 250, 2),
		// Feature 3 only in chunk 2; an empty row in chunk 1.
		r("f", 260, 3), r("g", 170),
	}
	lead := map[string]int64{
		// chunk 0 rows with feature 1: mean of 0,0,0,1 chunks = 1/4.
		"a1": sc / 4, "a2": sc / 4,
		// a3 also holds feature 9 (only a3, chunk 0): (1/4 + 0) / 2.
		"a3": sc / 4 / 2,
		// b moves into chunk 0's range: 1/4 of a chunk.
		"b": sc / 4,
		// e's feature sits at 2/11 of a chunk: clamped to one chunk back.
		"e": 2*sc - sc,
		"f": 2 * sc, "g": sc,
	}
	for i := range 10 {
		lead["d"+string(rune('0'+i))] = 2 * sc / 11
	}
	// Two blocks, so sums cross blocks (and, on a runner, bundles).
	var blocks []any
	var want []any
	for _, part := range [][]row{in[:5], in[5:]} {
		k := KeyedBlock{Rows: emptyMatrix(), Seed: 1}
		for _, x := range part {
			k.Rows.Append(x.user, x.feats)
			k.Lead = append(k.Lead, x.lead)
			want = append(want, fmt.Sprintf("%s lead=%d tie=%d seed=1 feats=%v", x.user, leadKey(lead[x.user]), x.lead, k.Rows.Row(k.Rows.NumRows()-1)))
		}
		blocks = append(blocks, k)
	}
	p, s, col := ptest.Create(blocks)
	got := sharpen(s, col, beam.Create(s, b))
	passert.Equals(s, beam.ParDo(s, describeKeyed, got), want...)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

func TestSharpenScale(t *testing.T) {
	for _, c := range []int{0, 1, 3, 10_000, 1 << 20, maxSharpenChunks} {
		sc, err := sharpenScale(c)
		if err != nil || sc < 2 || int64(max(c, 1))*sc >= 1<<(coordBits-1) {
			t.Errorf("sharpenScale(%d) = %d, %v: chunk values leave [0, 2^29)", c, sc, err)
		}
	}
	if _, err := sharpenScale(maxSharpenChunks + 1); err == nil {
		t.Errorf("sharpenScale(%d) accepted", maxSharpenChunks+1)
	}
}
