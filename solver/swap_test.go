package solver

import (
	"context"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// swapped runs one swap pass over clusters as refine would, and returns
// the refiner and the number of swaps.
func swapped(t *testing.T, s *state, clusters [][]int32) (*refiner, int) {
	t.Helper()
	r := s.newRefiner(clusters)
	r.indexCentres()
	r.findNearest(true)
	n, err := r.swapPass()
	if err != nil {
		t.Fatal(err)
	}
	return r, n
}

// sizes is the sorted multiset of cluster sizes.
func sizes(clusters [][]int32) []int {
	var out []int
	for _, c := range clusters {
		out = append(out, len(c))
	}
	slices.Sort(out)
	return out
}

// TestSwapPass: a swap exchanges users between clusters of exactly k
// members, which no single move can leave; the pass keeps every size,
// keeps its running cost exact and only raises the Jaccard.
func TestSwapPass(t *testing.T) {
	// Users u0, u2 hold {1 2} and u1, u3 hold {3 4}; k = 2. Clusters
	// {u0, u1} and {u2, u3} release all four features (smooth: 1 holder
	// of 2 keeps one; c = 8) or none (non-smooth: s = 8); exchanging u1
	// and u2 makes each cluster identical rows (cost 0).
	crossed := [][]uint32{{1, 2}, {3, 4}, {1, 2}, {3, 4}}
	for _, md := range allModes {
		t.Run(md.String()+"/crossed", func(t *testing.T) {
			s := resolveState(crossed, 2, md)
			r := s.newRefiner([][]int32{{0, 1}, {2, 3}})
			r.indexCentres()
			r.findNearest(false)
			if moves, err := r.movePass(); err != nil || moves != 0 {
				t.Fatalf("move pass: %d moves, %v; want none (every cluster has k users)", moves, err)
			}
			r, n := swapped(t, s, [][]int32{{0, 1}, {2, 3}})
			if n != 1 {
				t.Errorf("%d swaps, want 1", n)
			}
			want := [][]int32{{0, 2}, {1, 3}}
			if got := sortedClusters(r.clusters()); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("clusters %v, want %v", got, want)
			}
			if r.total != (cost{}) {
				t.Errorf("running cost %+v, want 0", r.total)
			}
		})
		t.Run(md.String()+"/nothing to gain", func(t *testing.T) {
			s := resolveState(crossed, 2, md)
			r, n := swapped(t, s, [][]int32{{0, 2}, {1, 3}})
			if n != 0 {
				t.Errorf("%d swaps of pure clusters, want 0", n)
			}
			if got := sortedClusters(r.clusters()); !slices.EqualFunc(got, [][]int32{{0, 2}, {1, 3}}, slices.Equal) {
				t.Errorf("clusters changed to %v", got)
			}
		})
		// Random rows in random clusters of 3 to 5 users, k = 3.
		t.Run(md.String()+"/random", func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				m := randomMatrix(seed, 300, 30, 4)
				s := &state{p: withDefaults(Params{K: 3, Mode: md, Seed: 1}), ctx: context.Background(), canon: m, pr: newProblem(m)}
				var clusters [][]int32
				for lo := 0; lo < m.NumRows(); {
					hi := min(m.NumRows(), lo+3+lo%3)
					if m.NumRows()-hi < 3 {
						hi = m.NumRows()
					}
					var c []int32
					for u := lo; u < hi; u++ {
						c = append(c, int32(u))
					}
					clusters = append(clusters, c)
					lo = hi
				}
				before := s.totalCost(clusters)
				r, n := swapped(t, s, clusters)
				after := r.clusters()
				if n == 0 {
					t.Errorf("seed %d: no swap in random clusters", seed)
				}
				if !slices.Equal(sizes(after), sizes(clusters)) {
					t.Errorf("seed %d: cluster sizes changed", seed)
				}
				if got := s.totalCost(after); got != r.total {
					t.Errorf("seed %d: running cost %+v, recomputed %+v", seed, r.total, got)
				}
				if jaccardLess(s.pr.entries, r.total, before) || r.total == before {
					t.Errorf("seed %d: cost %+v after %d swaps, was %+v: the Jaccard did not rise", seed, r.total, n, before)
				}
			}
		})
	}
	// Cancelled: the pass returns the context's error.
	t.Run("cancelled", func(t *testing.T) {
		s := resolveState(crossed, 2, matrix.Smooth)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.ctx = ctx
		r := s.newRefiner([][]int32{{0, 1}, {2, 3}})
		r.indexCentres()
		r.findNearest(true)
		if _, err := r.swapPass(); err == nil {
			t.Error("no error from a cancelled swap pass")
		}
	})
}
