package transforms

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/lsh"
	"github.com/smoothanon/smoothanon/matrix"
)

func init() {
	register.Function2x0(describeKeyed)
}

// testRow is one row of a hand-written block.
type testRow struct {
	user  string
	feats []uint32
}

// blockOf builds a block of rows.
func blockOf(rows ...testRow) matrix.Matrix {
	m := emptyMatrix()
	for _, r := range rows {
		m.Append(r.user, r.feats)
	}
	return m
}

// describeKeyed emits one line per row of a keyed block, so tests can
// compare keys row by row whatever the blocking.
func describeKeyed(b KeyedBlock, emit func(string)) {
	for i, u := range b.Rows.Users {
		emit(fmt.Sprintf("%s lead=%d tie=%d seed=%d feats=%v", u, b.lead(i), b.tie(i), b.Seed, b.Rows.Row(i)))
	}
}

func TestBlockCodersRoundTrip(t *testing.T) {
	m := blockOf(testRow{"", nil}, testRow{"u1", []uint32{0, 1, 7, 1<<32 - 1}}, testRow{"ü\x00x", []uint32{5}})
	if got, err := decMatrix(encMatrix(m)); err != nil || !got.Equal(&m) {
		t.Errorf("matrix %+v -> %+v, %v", m, got, err)
	}
	empty := emptyMatrix()
	if got, err := decMatrix(encMatrix(empty)); err != nil || got.NumRows() != 0 || !slices.Equal(got.Offsets, []int64{0}) {
		t.Errorf("empty matrix -> %+v, %v", got, err)
	}
	for _, k := range []KeyedBlock{
		{Rows: m, Seed: -3},
		{Rows: m, Lead: []uint64{1, 2, 1<<64 - 1}, Seed: 9},
		{Rows: m, Lead: []uint64{1, 2, 3}, Tie: []uint64{4, 5, 6}},
	} {
		got, err := decKeyedBlock(encKeyedBlock(k))
		if err != nil || !got.Rows.Equal(&k.Rows) || !slices.Equal(got.Lead, k.Lead) || !slices.Equal(got.Tie, k.Tie) ||
			(got.Lead == nil) != (k.Lead == nil) || got.Seed != k.Seed {
			t.Errorf("keyed block %+v -> %+v, %v", k, got, err)
		}
	}
	for _, c := range []ChunkBlock{{Block: KeyedBlock{Rows: m, Lead: []uint64{1, 2, 3}, Seed: 4}, Chunks: 300}, {Block: KeyedBlock{Rows: emptyMatrix()}}} {
		got, err := decChunkBlock(encChunkBlock(c))
		if err != nil || got.Chunks != c.Chunks || !got.Block.Rows.Equal(&c.Block.Rows) || !slices.Equal(got.Block.Lead, c.Block.Lead) || got.Block.Seed != c.Block.Seed {
			t.Errorf("chunk block %+v -> %+v, %v", c, got, err)
		}
	}
	out := blockOf(testRow{"", []uint32{3}}, testRow{"u1", nil}, testRow{"ü\x00x", []uint32{5, 6}})
	o := OutBlock{In: m, Out: out}
	if got, err := decOutBlock(encOutBlock(o)); err != nil || !got.In.Equal(&m) || !got.Out.Equal(&out) {
		t.Errorf("out block -> %+v, %v", got, err)
	}
	c := classBlock{Hash: [][2]uint64{{1, 2}, {1, 3}}, Acc: []ClassAcc{{Rows: 5, Out: []uint32{1, 4}, Hits: []int64{5, 2}, Collisions: 1}, {Rows: 2, Out: []uint32{}, Hits: []int64{}}}}
	if got, err := decClassBlock(encClassBlock(c)); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("class block %+v -> %+v, %v", c, got, err)
	}
	g := RowGroup{File: "/a/b.parquet", Group: 12}
	if got, err := decRowGroup(encRowGroup(g)); err != nil || got != g {
		t.Errorf("RowGroup %+v -> %+v, %v", g, got, err)
	}
	// Truncated or padded elements are errors, never silent garbage.
	for name, b := range map[string][]byte{"matrix": encMatrix(m), "keyed": encKeyedBlock(KeyedBlock{Rows: m, Lead: []uint64{1, 2, 3}}), "out": encOutBlock(o),
		"chunk": encChunkBlock(ChunkBlock{Block: KeyedBlock{Rows: m}, Chunks: 300})} {
		dec := map[string]func([]byte) error{
			"matrix": func(p []byte) error { _, err := decMatrix(p); return err },
			"keyed":  func(p []byte) error { _, err := decKeyedBlock(p); return err },
			"out":    func(p []byte) error { _, err := decOutBlock(p); return err },
			"chunk":  func(p []byte) error { _, err := decChunkBlock(p); return err },
		}[name]
		for cut := 0; cut < len(b); cut++ {
			if dec(b[:cut]) == nil {
				t.Errorf("%s truncated to %d of %d bytes decoded without error", name, cut, len(b))
			}
		}
		if dec(append(slices.Clone(b), 0)) == nil {
			t.Errorf("%s with a trailing byte decoded without error", name)
		}
	}
}

func TestSliceAndPick(t *testing.T) {
	m := blockOf(testRow{"a", []uint32{1}}, testRow{"b", nil}, testRow{"c", []uint32{2, 3}}, testRow{"d", []uint32{4}})
	for _, c := range []struct{ lo, hi int }{{0, 4}, {0, 2}, {1, 3}, {2, 4}, {3, 3}} {
		got := slice(&m, c.lo, c.hi)
		want := m.Permute([]int{0, 1, 2, 3}[c.lo:c.hi])
		if err := got.Validate(); err != nil || !got.Equal(want) {
			t.Errorf("slice [%d,%d) = %+v (%v), want %+v", c.lo, c.hi, got, err, want)
		}
	}
	k := KeyedBlock{Rows: m, Lead: []uint64{10, 11, 12, 13}, Seed: 2}
	sub := k.subset([]int{3, 1})
	if !slices.Equal(sub.Rows.Users, []string{"d", "b"}) || !slices.Equal(sub.Lead, []uint64{13, 11}) || sub.Tie != nil || sub.Seed != 2 {
		t.Errorf("subset = %+v", sub)
	}
	if all := k.subset([]int{0, 1, 2, 3}); &all.Rows.Users[0] != &k.Rows.Users[0] {
		t.Error("subset of every row copied the block")
	}
}

// TestCutterMatchesBytes checks the cutter, which decides most rows by
// their (lead, tie) prefix, against the definition: the number of
// boundary keys at or below the row's full sort key. Leads repeat often,
// so many rows tie with a boundary's prefix.
func TestCutterMatchesBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := lsh.New(4)
	var keys [][]byte
	var rows []rowKey
	for i := range 2000 {
		feats := []uint32{uint32(rng.IntN(50)), 50 + uint32(rng.IntN(50))}
		k := rowKey{lead: uint64(rng.IntN(20)), tie: uint64(rng.IntN(3)), user: fmt.Sprintf("u%d", i), features: feats, h: h}
		if i%3 == 0 {
			k.lead, k.tie = 0, 0 // as with the MinHash key
		}
		rows = append(rows, k)
		keys = append(keys, k.bytes())
	}
	c := newCutter(computeBounds(slices.Clone(keys[:300]), 17, false))
	sampled := make([]int64, len(c.keys)+1)
	for i := range 300 {
		k := rows[i]
		sampled[c.chunk(&k)]++
	}
	if !reflect.DeepEqual(sampled, c.sampled) {
		t.Fatalf("the sample's rows per chunk are %v, Bounds.Sampled says %v", sampled, c.sampled)
	}
	for i := range rows {
		k := rows[i]
		k.signed = false
		want := int64(0)
		for _, b := range c.keys {
			if bytes.Compare(b, keys[i]) <= 0 {
				want++
			}
		}
		if got := c.chunk(&k); got != want {
			t.Fatalf("row %d (lead %d tie %d): chunk %d, want %d", i, k.lead, k.tie, got, want)
		}
	}
	// compareKeys is the byte order of the keys.
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if got, want := compareKeys(&a, &b), bytes.Compare(keys[i-1], keys[i]); got != want {
			t.Fatalf("compareKeys(%d, %d) = %d, bytes say %d", i-1, i, got, want)
		}
	}
}

func TestComputeBounds(t *testing.T) {
	var keys [][]byte
	for i := 99; i >= 0; i-- {
		keys = append(keys, []byte{byte(i)})
	}
	b := computeBounds(keys, 4, false)
	want := [][]byte{{25}, {50}, {75}}
	if !reflect.DeepEqual(b.Keys, want) || !reflect.DeepEqual(b.Sampled, []int64{25, 25, 25, 25}) {
		t.Fatalf("bounds %v with %v sampled rows, want %v with 25 each", b.Keys, b.Sampled, want)
	}
	if got := computeBounds([][]byte{{1}, {1}, {1}, {1}}, 4, false); len(got.Keys) != 1 || !reflect.DeepEqual(got.Sampled, []int64{0, 4}) {
		t.Errorf("repeated sample keys gave bounds %v with %v sampled rows, want one with [0 4]", got.Keys, got.Sampled)
	}
	if got := computeBounds(nil, 3, false); len(got.Keys) != 0 || !reflect.DeepEqual(got.Sampled, []int64{0}) {
		t.Errorf("empty sample gave bounds %v with %v sampled rows", got.Keys, got.Sampled)
	}
}

// leadKeys returns one sort key per leading value, in order: the value,
// then the index (keys are distinct, as user ids make them).
func leadKeys(leads []uint64) [][]byte {
	keys := make([][]byte, len(leads))
	for i, l := range leads {
		keys[i] = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, l), uint32(i))
	}
	return keys
}

// TestComputeBoundsAtGaps: with gaps, a boundary moves to the widest jump
// of the leading key within half a chunk of its quantile, stays at the
// quantile where the keys are evenly spaced or equal (minhash leads), and
// every chunk but the last holds between half and one and a half chunks
// of samples.
func TestComputeBoundsAtGaps(t *testing.T) {
	even := make([]uint64, 100)
	for i := range even {
		even[i] = uint64(i)
	}
	jump := slices.Clone(even) // a jump of 50 before index 61
	for i := 61; i < 100; i++ {
		jump[i] += 50
	}
	far := slices.Clone(even) // a jump before index 80: beyond half a chunk of 50
	for i := 80; i < 100; i++ {
		far[i] += 50
	}
	for _, c := range []struct {
		name   string
		leads  []uint64
		chunks int64
		want   []uint64 // leads of the bounds
	}{
		{"even", even, 4, []uint64{25, 50, 75}},
		{"equal", make([]uint64, 100), 4, []uint64{0, 0, 0}},
		{"jump", jump, 2, []uint64{111}},
		{"jump beyond the window", far, 2, []uint64{50}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := computeBounds(leadKeys(c.leads), c.chunks, true)
			var got []uint64
			for _, k := range b.Keys {
				got = append(got, binary.BigEndian.Uint64(k))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("bound leads %v, want %v", got, c.want)
			}
		})
	}
	t.Run("chunk sizes", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for trial := 0; trial < 200; trial++ {
			n, chunks := 200+r.IntN(800), int64(2+r.IntN(9))
			leads := make([]uint64, n)
			for i := 1; i < n; i++ {
				leads[i] = leads[i-1] + uint64(r.IntN(3)*r.IntN(3)*r.IntN(50)) // many ties, a few jumps
			}
			keys := leadKeys(leads)
			b := computeBounds(keys, chunks, true)
			per, prev := int64(n)/chunks, int64(0)
			for _, k := range b.Keys {
				at := int64(sort.Search(n, func(i int) bool { return bytes.Compare(keys[i], k) >= 0 }))
				if size := at - prev; size < per/2 || size > per*3/2 {
					t.Fatalf("n=%d chunks=%d: a chunk of %d samples, want %d..%d", n, chunks, size, per/2, per*3/2)
				}
				prev = at
			}
		}
	})
}
