package transforms

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// TestSampleOrder: the order is the rows' own, whatever order they come
// in, for every key; KeyHub puts the holders of the most held feature
// first; a repeated user and an unresolved key are refused.
func TestSampleOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var rows [][]uint32
	for range 300 {
		var r []uint32
		for range 1 + rng.IntN(5) {
			r = append(r, uint32(rng.IntN(40)))
		}
		slices.Sort(r)
		rows = append(rows, slices.Compact(r))
	}
	build := func(perm []int) *matrix.Matrix {
		m := matrix.New(len(rows), 0)
		for _, i := range perm {
			m.Append(fmt.Sprintf("u%03d", i), rows[i])
		}
		return m
	}
	ident := make([]int, len(rows))
	for i := range ident {
		ident[i] = i
	}
	shuffled := slices.Clone(ident)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, key := range []Key{KeySpectral, KeyHub, KeyTwoHop, KeyMinHash} {
		users := func(m *matrix.Matrix) []string {
			o, err := SampleOrder(m, SignatureParams{Key: key, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			var u []string
			for _, i := range o {
				u = append(u, m.Users[i])
			}
			return u
		}
		a, b := users(build(ident)), users(build(shuffled))
		if !slices.Equal(a, b) {
			t.Errorf("%v: the order depends on the rows' order", key)
		}
		if key != KeyHub {
			continue
		}
		counts := map[uint32]int64{}
		for _, r := range rows {
			for _, f := range r {
				counts[f]++
			}
		}
		top := uint32(0)
		for f := range counts {
			if hubKey(f, counts[f]) < hubKey(top, counts[top]) {
				top = f
			}
		}
		holders := 0
		for _, r := range rows {
			if slices.Contains(r, top) {
				holders++
			}
		}
		for _, u := range a[:holders] {
			var i int
			fmt.Sscanf(u, "u%03d", &i)
			if !slices.Contains(rows[i], top) {
				t.Fatalf("hub: %s leads without feature %d, the most held", u, top)
			}
		}
	}
	m := build(ident)
	m.Append("u000", []uint32{1})
	if _, err := SampleOrder(m, SignatureParams{Key: KeyHub}); err == nil {
		t.Error("a repeated user: no error")
	}
	if _, err := SampleOrder(build(ident), SignatureParams{Key: KeyAuto}); err == nil {
		t.Error("KeyAuto: no error")
	}
}
