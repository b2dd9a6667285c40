package solver

import (
	"context"
	"fmt"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// jac is the Jaccard of a release of cost c over e input entries.
func jac(e int64, c cost) float64 { return float64(e-c.s) / float64(e+c.c) }

// TestJaccardObjective: every clustering decision maximises the Jaccard
// (E − s) / (E + c), not a proxy. Each case is one where minimising the
// changed entries s + c decides otherwise, so the test fails if a decision
// reverts to s + c.
func TestJaccardObjective(t *testing.T) {
	// A refine move. Users (features) u0 (0), u1 (1 3 4), u2 (2), u3 (1 4),
	// u4 (0 2 3), u5 (0 1 2), u6 (0 1 3); k = 2; clusters A = {u0, u1, u2},
	// B = {u3, u4}, C = {u5, u6}: E = 16, s = 5, c = 7, J = 11/23. Moving u0
	// to B gives s 4, c 7 (J 0.522, 11 changed entries); to C s 2, c 10
	// (J 0.538, 12 changed entries). s + c picks B; the Jaccard picks C.
	t.Run("refine move", func(t *testing.T) {
		rows := [][]uint32{{0}, {1, 3, 4}, {2}, {1, 4}, {0, 2, 3}, {0, 1, 2}, {0, 1, 3}}
		m := matrix.New(len(rows), 0)
		for i, r := range rows {
			m.Append(fmt.Sprintf("u%d", i), r)
		}
		pr := newProblem(m, Params{})
		s := &state{p: Params{K: 2, Mode: matrix.Smooth}, pr: pr, ctx: context.Background()}
		r := s.newRefiner([][]int32{{0, 1, 2}, {3, 4}, {5, 6}})
		if r.total != (cost{s: 5, c: 7}) {
			t.Fatalf("total cost %+v, want {s:5 c:7}", r.total)
		}
		p := pr.userPoint[0]
		top := []int32{1, 2, -1, -1, -1, -1}
		to, d := r.bestMove(p, 0, pr.row(p), top, false)
		if to != 2 || d != (cost{s: -3, c: 3}) {
			t.Errorf("u0 moves to cluster %d (change %+v), want 2 (C, change {s:-3 c:3})", to, d)
		}
		// The whole refine: u0 ends in C, and the Jaccard only rises.
		out, _, err := s.refine([][]int32{{0, 1, 2}, {3, 4}, {5, 6}}, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := jac(pr.entries, s.totalCost(out)); got < 14.0/26 {
			t.Errorf("refined Jaccard %.4f, want at least 14/26", got)
		}
	})

	// Moves and cuts: a change d from total is taken iff λ·d < 0 at λ =
	// jaccardWeight(E, total), which must be iff it raises the Jaccard.
	t.Run("weight", func(t *testing.T) {
		for _, c := range []struct {
			e            int64
			total, delta cost
			take         bool // the Jaccard rises
		}{
			{16, cost{5, 7}, cost{-1, 0}, true},
			{16, cost{5, 7}, cost{-3, 3}, true},                   // s + c: no change
			{100, cost{50, 10}, cost{2, -3}, false},               // s + c: −1, taken
			{100, cost{50, 10}, cost{-2, 3}, true},                // s + c: +1, refused
			{2099732, cost{1411000, 113000}, cost{-10, 25}, true}, // dblp's J ≈ 0.31: s + c +15
			{2099732, cost{1411000, 113000}, cost{-10, 35}, false},
			{1 << 40, cost{1 << 39, 1 << 38}, cost{-3, 7}, true}, // E ≥ 2^31: scaled weight
		} {
			w := jaccardWeight(c.e, c.total)
			if got := w.of(c.delta) < 0; got != c.take {
				t.Errorf("E %d, cost %+v, change %+v: taken %v, want %v", c.e, c.total, c.delta, got, c.take)
			}
			if rises := jac(c.e, c.total.add(c.delta)) > jac(c.e, c.total); rises != c.take {
				t.Fatalf("bad case: E %d, cost %+v, change %+v: the Jaccard rises %v", c.e, c.total, c.delta, rises)
			}
		}
	})

	// The choice among improve's candidates: the highest Jaccard wins,
	// though it changes more entries (ties: the earlier candidate).
	t.Run("candidates", func(t *testing.T) {
		some := [][]int32{{0}}
		for _, c := range []struct {
			e     int64
			costs []cost
			nils  []bool
			want  int
		}{
			{16, []cost{{4, 7}, {2, 10}, {5, 7}}, nil, 1},                 // J .522, .538, .478; s + c: 0
			{16, []cost{{2, 10}, {2, 10}, {4, 7}}, nil, 0},                // tie: the earlier
			{16, []cost{{4, 7}, {0, 0}, {2, 10}}, []bool{false, true}, 2}, // nil skipped
			{1 << 40, []cost{{1 << 38, 0}, {1<<38 - 5, 5}}, nil, 1},       // 128-bit products
		} {
			cands := make([][][]int32, len(c.costs))
			for i := range cands {
				if i >= len(c.nils) || !c.nils[i] {
					cands[i] = some
				}
			}
			if got := bestCandidate(c.e, cands, c.costs); got != c.want {
				t.Errorf("E %d, costs %v: candidate %d, want %d", c.e, c.costs, got, c.want)
			}
		}
	})
}

func TestFew(t *testing.T) {
	for _, c := range []struct {
		moves, n int
		want     bool
	}{{0, 0, true}, {0, 10, true}, {1, 10, false}, {1, 1001, true}, {1, 1000, false}, {999, 1_000_000, true}, {1000, 1_000_000, false}} {
		if got := few(c.moves, c.n); got != c.want {
			t.Errorf("few(%d, %d) = %v, want %v", c.moves, c.n, got, c.want)
		}
	}
}
