package solver

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/knn"
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
			pr := newProblem(m, Params{})
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

// TestNearestPoints: a point's nearest other points are listed while they
// and its own users number fewer than nn, at most nbrPoints.
func TestNearestPoints(t *testing.T) {
	m := matrix.New(0, 0)
	add := func(user string, copies int, feats ...uint32) {
		for i := 0; i < copies; i++ {
			m.Append(fmt.Sprintf("%s%d", user, i), feats)
		}
	}
	add("a", 3, 1, 2)       // a: 3 users
	add("b", 1, 1, 2, 3)    // distance 1 from a
	add("c", 2, 1, 2, 3, 4) // 2 from a
	add("d", 1, 1)          // 1 from a
	add("e", 1, 7, 8)       // 4 from a
	add("f", 6, 9)          // 6 users
	ix, err := knn.NewIndex(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	pr := newProblem(m, Params{})
	point := func(user string) int32 { return pr.userPoint[slices.Index(m.Users, user)] }
	names := map[int32]string{}
	for _, u := range []string{"a0", "b0", "c0", "d0", "e0", "f0"} {
		names[point(u)] = u[:1]
	}
	list := func(u string) string {
		var s []string
		for _, q := range pr.neighbours(point(u)) {
			if q >= 0 {
				s = append(s, names[q])
			}
		}
		return fmt.Sprint(s)
	}
	for _, c := range []struct {
		nn   int
		want map[string]string
	}{
		// a: its 2 others, b and d make 4 users, so c (distance 2) is not
		// listed; b: a (3 users) and c make 5; f has 6 users, none.
		{4, map[string]string{"a0": "[b d]", "b0": "[a c]", "f0": "[]"}},
		// nbrPoints each, nearest first, ties (d and f at 3 from e) by
		// their lowest row.
		{16, map[string]string{"a0": "[b d c f]", "e0": "[d f a b]", "f0": "[d a e b]"}},
		{5, map[string]string{"f0": "[]", "c0": "[b a]"}},
	} {
		if _, err := pr.nearestPoints(ix, c.nn, 1, 0); err != nil {
			t.Fatal(err)
		}
		for u, want := range c.want {
			if got := list(u); got != want {
				t.Errorf("nn %d: %s lists %s, want %s", c.nn, u, got, want)
			}
		}
	}
}
