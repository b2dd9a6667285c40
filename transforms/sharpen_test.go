package transforms

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func TestSharpen(t *testing.T) {
	// Three chunks: lead < 100, [100, 200), >= 200.
	b := Bounds{Keys: [][]byte{SigRow{Lead: 100}.SortKey(), SigRow{Lead: 200}.SortKey()}}
	sc, err := sharpenScale(3)
	if err != nil {
		t.Fatal(err)
	}
	row := func(user string, lead uint64, feats ...uint32) SigRow {
		return SigRow{Lead: lead, Row: Row{User: user, Features: feats}}
	}
	in := []SigRow{
		// Feature 1: three rows in chunk 0 and b in chunk 1.
		row("a1", 10, 1), row("a2", 20, 1), row("a3", 30, 1, 9),
		row("b", 150, 1),
		// Feature 2: ten rows in chunk 0 and e in chunk 2.
		row("d0", 40, 2), row("d1", 41, 2), row("d2", 42, 2), row("d3", 43, 2), row("d4", 44, 2),
		row("d5", 45, 2), row("d6", 46, 2), row("d7", 47, 2), row("d8", 48, 2), row("d9", 49, 2),
		row("e", 250, 2),
		// Feature 3 only in chunk 2; an empty row in chunk 1.
		row("f", 260, 3), row("g", 170),
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
	var rows, want []any
	for _, r := range in {
		rows = append(rows, r)
		want = append(want, SigRow{Lead: leadKey(lead[r.Row.User]), Tie: r.Lead, Row: r.Row})
	}
	p, s, col := ptest.Create(rows)
	got := sharpen(s, col, beam.Create(s, b))
	passert.Equals(s, got, want...)
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
