package solver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// TestNewProblemPoints checks newProblem's points against their
// definition: users share a point iff their rows are equal, points are
// numbered by their first user, and a point's weight and features are its
// users' count and row. With a hash that collides for every pair of rows
// of one length, only the rows' comparison tells them apart.
func TestNewProblemPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	m := matrix.New(0, 0)
	var rows [][]uint32
	for i := range 40 {
		rows = append(rows, []uint32{uint32(i), uint32(i + 100)})
	}
	rows = append(rows, nil, []uint32{5})
	for u := range 600 {
		m.Append(fmt.Sprint("u", u), rows[r.IntN(len(rows))])
	}
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%v", collide), func(t *testing.T) {
			if collide {
				defer func(h func([]uint32) uint64) { hashRow = h }(hashRow)
				hashRow = func(r []uint32) uint64 { return uint64(len(r)) }
			}
			pr := newProblem(m)
			firstOf := map[string]int32{} // row -> expected point
			w := map[int32]int32{}
			for u := range m.NumRows() {
				row := m.Row(u)
				key := fmt.Sprint(row)
				want, ok := firstOf[key]
				if !ok {
					want = int32(len(firstOf))
					firstOf[key] = want
				}
				p := pr.userPoint[u]
				if p != want {
					t.Fatalf("user %d (row %v): point %d, want %d", u, row, p, want)
				}
				w[p]++
				got := make([]uint32, 0, len(row))
				for _, f := range pr.row(p) {
					got = append(got, pr.orig[f])
				}
				if !slices.Equal(got, row) {
					t.Fatalf("point %d holds %v, want %v", p, got, row)
				}
			}
			if pr.np != len(firstOf) {
				t.Fatalf("%d points, want %d", pr.np, len(firstOf))
			}
			for p, c := range w {
				if pr.w[p] != c {
					t.Fatalf("point %d weighs %d, want %d", p, pr.w[p], c)
				}
			}
		})
	}
}
