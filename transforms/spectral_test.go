package transforms

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
)

// referenceSpectral computes the spectral lead keys of m's rows in plain Go,
// straight from the definition: features start at initCoord; each round
// sets every row to the truncated mean of its features and every feature
// to the truncated mean of its rows.
func referenceSpectral(m *matrix.Matrix, seed int64, rounds int) []uint64 {
	s := spectralSeed(seed)
	fx := map[uint32]int64{}
	for _, f := range m.Features {
		fx[f] = initCoord(s, f)
	}
	mean := func(r []uint32) int64 {
		if len(r) == 0 {
			return 0
		}
		var sum int64
		for _, f := range r {
			sum += fx[f]
		}
		return sum / int64(len(r))
	}
	for range rounds {
		sum, n := map[uint32]int64{}, map[uint32]int64{}
		for i := range m.NumRows() {
			c := mean(m.Row(i))
			for _, f := range m.Row(i) {
				sum[f] += c
				n[f]++
			}
		}
		for f := range fx {
			fx[f] = sum[f] / n[f]
		}
	}
	keys := make([]uint64, m.NumRows())
	for i := range keys {
		keys[i] = leadKey(mean(m.Row(i)))
	}
	return keys
}

func TestSpectralKey(t *testing.T) {
	// 12 disconnected communities of 25 users: after the rounds every
	// community must occupy one contiguous run of the sort order.
	m, err := gen.SBM(gen.SBMParams{N: 300, S: 25, Q: 0.4, P: 0, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	const seed, rounds = 5, 6
	keys := referenceSpectral(m, seed, rounds)

	order := make([]int, m.NumRows())
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpU64(keys[a], keys[b]) })
	runs := 0
	for j, i := range order {
		if j == 0 || i/25 != order[j-1]/25 {
			runs++
		}
	}
	if runs != 12 {
		t.Errorf("sorted by the spectral key the 12 communities form %d runs, want 12", runs)
	}

	// The Beam transform computes exactly these keys, over blocks.
	var want []any
	for i := range m.NumRows() {
		want = append(want, fmt.Sprintf("%s lead=%d tie=0 seed=%d feats=%v", m.Users[i], keys[i], seed, m.Row(i)))
	}
	p, s, col := ptest.Create([]any{slice(m, 0, 100), slice(m, 100, 110), slice(m, 110, 300)})
	got := Signature(s, col, SignatureParams{Seed: seed, Key: KeySpectral, Iterations: rounds})
	passert.Equals(s, beam.ParDo(s, describeKeyed, got), want...)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestSpectralHelpers(t *testing.T) {
	// Start values span [-2^29, 2^29) and depend on the seed.
	lo, hi := int64(0), int64(0)
	for f := uint32(0); f < 10000; f++ {
		v := initCoord(spectralSeed(1), f)
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo < -1<<29 || hi >= 1<<29 || lo > -1<<28 || hi < 1<<28 {
		t.Errorf("start values in [%d, %d], want spread over [-2^29, 2^29)", lo, hi)
	}
	if initCoord(spectralSeed(1), 7) == initCoord(spectralSeed(2), 7) {
		t.Error("start values do not depend on the seed")
	}
	// leadKey preserves the order of signed coordinates.
	vals := []int64{-1 << 29, -5, -1, 0, 1, 7, 1<<29 - 1}
	for i := 1; i < len(vals); i++ {
		if leadKey(vals[i-1]) >= leadKey(vals[i]) {
			t.Errorf("leadKey(%d) >= leadKey(%d)", vals[i-1], vals[i])
		}
	}
	// Dense and sparse feature maps answer alike, and reject what is absent.
	for _, ids := range [][]uint32{{0, 1, 2, 5}, {3, 1 << 30, 4000000000}} {
		var blocks []featBlock
		sums := newBundleSums()
		for _, f := range ids {
			sums.add([]uint32{f}, -int64(f%(1<<29)))
			sums.add([]uint32{f}, -int64(f%(1<<29))-1)
		}
		var keys []int64
		sums.flush(func(k int64, b featBlock) { keys, blocks = append(keys, k), append(blocks, b) })
		i := 0
		c, err := readCoords(func(k *int64, b *featBlock) bool {
			if i == len(blocks) {
				return false
			}
			*k, *b = keys[i], blocks[i]
			i++
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ids {
			// mean of -x and -x-1, truncated toward zero, is -x.
			if v, ok := c.get(f); !ok || int64(v) != -int64(f%(1<<29)) {
				t.Errorf("get(%d) = %d, %v", f, v, ok)
			}
		}
		if _, ok := c.get(4); ok {
			t.Errorf("get(4) found in %v", ids)
		}
	}
	// A block under the wrong key or with an out-of-range mean is an error.
	for _, bad := range []struct {
		key int64
		b   featBlock
	}{
		{1, featBlock{Feats: []uint32{7}, Sum: []int64{1}, N: []int64{1}}},
		{0, featBlock{Feats: []uint32{7}, Sum: []int64{1 << 40}, N: []int64{1}}},
		{0, featBlock{Feats: []uint32{7}, Sum: []int64{1}, N: []int64{0}}},
		{0, featBlock{Feats: []uint32{7}, Sum: []int64{1}}},
	} {
		done := false
		if _, err := readCoords(func(k *int64, b *featBlock) bool {
			if done {
				return false
			}
			*k, *b, done = bad.key, bad.b, true
			return true
		}); err == nil {
			t.Errorf("readCoords accepted block %d %+v", bad.key, bad.b)
		}
	}
	// Merging is exact and order-free, and blocks survive their coder.
	a := featBlock{Feats: []uint32{1, 4, 9}, Sum: []int64{-7, 3, 1 << 40}, N: []int64{1, 2, 3}}
	b := featBlock{Feats: []uint32{4, 5}, Sum: []int64{-3, 2}, N: []int64{5, 1}}
	want := featBlock{Feats: []uint32{1, 4, 5, 9}, Sum: []int64{-7, 0, 2, 1 << 40}, N: []int64{1, 7, 1, 3}}
	for _, got := range []featBlock{mergeBlocks(a, b), mergeBlocks(b, a)} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("mergeBlocks = %+v, want %+v", got, want)
		}
	}
	if got, err := decFeatBlock(encFeatBlock(want)); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("coder round trip = %+v, %v", got, err)
	}
	if _, err := decFeatBlock(encFeatBlock(want)[:5]); err == nil {
		t.Error("decFeatBlock accepted a truncated block")
	}
}

func TestCheckSignatureParams(t *testing.T) {
	for _, c := range []struct {
		p    SignatureParams
		okay bool
	}{
		{SignatureParams{}, true},
		{SignatureParams{Key: KeyMinHash, Seed: -3}, true},
		{SignatureParams{Key: KeySpectral, Iterations: 1}, true},
		{SignatureParams{Key: KeyAuto}, false}, // resolved by ChooseKey first
		{SignatureParams{Key: Key(9)}, false},
		{SignatureParams{Key: Key(-1)}, false},
		{SignatureParams{Iterations: -1}, false},
		{SignatureParams{Iterations: 1001}, false},
	} {
		if err := checkSignatureParams(c.p); (err == nil) != c.okay {
			t.Errorf("checkSignatureParams(%+v) = %v, want ok=%v", c.p, err, c.okay)
		}
	}
	for _, k := range []Key{KeySpectral, KeyHub, KeyTwoHop, KeyMinHash, KeyAuto} {
		if got, err := ParseKey(k.String()); err != nil || got != k {
			t.Errorf("ParseKey(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseKey("lsh"); err == nil {
		t.Error("ParseKey accepted lsh")
	}
}
