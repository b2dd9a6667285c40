package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/knn"
)

// swapped runs one swap pass over clusters as refine would, and returns
// the refiner, the number of swaps and whether the pass went past its
// probe.
func swapped(t *testing.T, s *state, clusters [][]int32) (*refiner, int, bool) {
	t.Helper()
	r := s.newRefiner(clusters)
	r.indexCentres()
	r.findNearest()
	n, paid, err := r.swapPass()
	if err != nil {
		t.Fatal(err)
	}
	return r, n, paid
}

// randomClusters is randomMatrix's rows in clusters of 3 to 5 users, or
// (large) rows of two groups in clusters of 40 to 60 users, each of one
// group but its last user.
func randomClusters(seed uint64, large bool) (*matrix.Matrix, [][]int32) {
	if !large {
		m := randomMatrix(seed, 600, 30, 4)
		return m, runClusters(m.NumRows(), 3, 3)
	}
	clusters := runClusters(600, 40, 21)
	r := rand.New(rand.NewPCG(seed, 2))
	m := matrix.New(600, 0)
	for i, c := range clusters {
		for j := range c {
			g := uint32(i % 2)
			if j == len(c)-1 {
				g = 1 - g
			}
			m.Append(fmt.Sprintf("u%03d", c[j]), []uint32{10 * g, 10*g + 1, 10*g + 2, 10*g + 3, 10*g + 4, 100 + uint32(r.IntN(100))})
		}
	}
	return m, clusters
}

// runClusters cuts users 0..n-1, in order, into clusters of lo0 to
// lo0+span-1 users (the last takes what a shorter one would leave).
func runClusters(n, lo0, span int) [][]int32 {
	var clusters [][]int32
	for lo := 0; lo < n; {
		hi := min(n, lo+lo0+lo%span)
		if n-hi < lo0 {
			hi = n
		}
		var c []int32
		for u := lo; u < hi; u++ {
			c = append(c, int32(u))
		}
		clusters = append(clusters, c)
		lo = hi
	}
	return clusters
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
			r.findNearest()
			if moves, err := r.movePass(); err != nil || moves != 0 {
				t.Fatalf("move pass: %d moves, %v; want none (every cluster has k users)", moves, err)
			}
			r, n, _ := swapped(t, s, [][]int32{{0, 1}, {2, 3}})
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
			r, n, _ := swapped(t, s, [][]int32{{0, 2}, {1, 3}})
			if n != 0 {
				t.Errorf("%d swaps of pure clusters, want 0", n)
			}
			if got := sortedClusters(r.clusters()); !slices.EqualFunc(got, [][]int32{{0, 2}, {1, 3}}, slices.Equal) {
				t.Errorf("clusters changed to %v", got)
			}
		})
		// Random rows in clusters of 3 to 5 users; and clusters of 40 to
		// 60 (whose expendable lists only drop who left) of one group's
		// users (features 0..4 or 10..14, and one at random) but one of
		// the other group's. k = 3; the same swaps with 1 and 4 workers.
		for _, large := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/random large=%v", md, large), func(t *testing.T) {
				for seed := uint64(1); seed <= 3; seed++ {
					m, clusters := randomClusters(seed, large)
					var first [][]int32
					for _, w := range []int{1, 4} {
						s := &state{p: withDefaults(Params{K: 3, Mode: md, Seed: 1, Workers: w}), ctx: context.Background(), canon: m, pr: newProblem(m, Params{})}
						before := s.totalCost(clusters)
						r, n, _ := swapped(t, s, clusters)
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
						if !jaccardLess(s.pr.entries, before, r.total) {
							t.Errorf("seed %d: cost %+v after %d swaps, was %+v: the Jaccard did not rise", seed, r.total, n, before)
						}
						if first == nil {
							first = after
						} else if !slices.EqualFunc(first, after, slices.Equal) {
							t.Errorf("seed %d: 1 and %d workers swap differently", seed, w)
						}
					}
				}
			})
		}
	}
	// The probe (every swapProbe-th point: here only point 0, users u0 and
	// u1 in a cluster of their own) finds nothing to gain, so the pass
	// stops before the crossed users, whose swap it would make.
	t.Run("probe does not pay", func(t *testing.T) {
		rows := append([][]uint32{{9}, {9}}, crossed...)
		s := resolveState(rows, 2, matrix.Smooth)
		clusters := [][]int32{{0, 1}, {2, 3}, {4, 5}}
		r, n, _ := swapped(t, s, clusters)
		if n != 0 {
			t.Errorf("%d swaps after a probe without gain, want 0", n)
		}
		if got := sortedClusters(r.clusters()); !slices.EqualFunc(got, clusters, slices.Equal) {
			t.Errorf("clusters changed to %v", got)
		}
	})
	// Cancelled: the pass returns the context's error.
	t.Run("cancelled", func(t *testing.T) {
		s := resolveState(crossed, 2, matrix.Smooth)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.ctx = ctx
		r := s.newRefiner([][]int32{{0, 1}, {2, 3}})
		r.indexCentres()
		r.findNearest()
		if _, _, err := r.swapPass(); err == nil {
			t.Error("no error from a cancelled swap pass")
		}
	})
}

// TestSwapsPay: the probe's change of cost, scaled by swapProbe, must
// raise the Jaccard by swapMinGain of itself (to first order).
func TestSwapsPay(t *testing.T) {
	start := cost{s: 500, c: 100} // E = 1000: J = 500/1100
	for _, c := range []struct {
		total cost
		pay   bool
	}{
		{start, false},
		{cost{s: 499, c: 100}, true},  // ×8: +1.6%
		{cost{s: 499, c: 101}, false}, // ×8: +0.9%
		{cost{s: 498, c: 101}, true},  // ×8: +2.5%
		{cost{s: 501, c: 100}, false}, // worse
		{cost{s: 502, c: 101}, false}, // worse in both
		{cost{s: 490, c: 90}, true},
		{cost{s: 0, c: 0}, true}, // a probe gain far beyond 1/8 of the whole
	} {
		r := &refiner{pr: &problem{entries: 1000}, total: c.total}
		if got := r.swapsPay(start); got != c.pay {
			t.Errorf("probe from %+v to %+v: pays %v, want %v", start, c.total, got, c.pay)
		}
	}
}

// TestSwapRefine: the clusters and the cost swapRefine returns agree,
// whether its pass stops at the probe after swapping or goes on.
func TestSwapRefine(t *testing.T) {
	// The crossed users at points 0 and 1 swap in the probe, but 8
	// identical rows of 1,000 features (point 2) make that gain, scaled
	// by swapProbe, less than swapMinGain of the Jaccard: the pass stops.
	wide := make([]uint32, 1000)
	for i := range wide {
		wide[i] = uint32(100 + i)
	}
	stopped := [][]uint32{{1, 2}, {3, 4}, {1, 2}, {3, 4}}
	for range 8 {
		stopped = append(stopped, wide)
	}
	for _, c := range []struct {
		name     string
		s        *state
		clusters [][]int32
	}{
		{"stops after swapping", resolveState(stopped, 2, matrix.Smooth), [][]int32{{0, 1}, {2, 3}, {4, 5, 6, 7, 8, 9, 10, 11}}},
		{"goes on", resolveState([][]uint32{{1, 2}, {3, 4}, {1, 2}, {3, 4}}, 2, matrix.Smooth), [][]int32{{0, 1}, {2, 3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, paid := swapped(t, c.s, c.clusters); paid != (c.name == "goes on") {
				t.Errorf("pass went past its probe: %v", paid)
			}
			out, total, err := c.s.swapRefine(c.clusters, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.s.totalCost(out); got != total {
				t.Errorf("returned cost %+v, the clusters' cost %+v", total, got)
			}
			if total != (cost{}) {
				t.Errorf("cost %+v after the swap, want 0", total)
			}
		})
	}
}

// TestSwapRefineGoesOn: swapRefine going on from refine's refiner (its
// index, its kept nearest centres, its clusters numbered with the emptied
// ones) swaps exactly as from a new refiner of refine's clusters.
func TestSwapRefineGoesOn(t *testing.T) {
	for _, md := range allModes {
		for _, large := range []bool{false, true} {
			for seed := uint64(1); seed <= 3; seed++ {
				m, clusters := randomClusters(seed, large)
				s := &state{p: withDefaults(Params{K: 3, Mode: md, Seed: 1, Workers: 2}), ctx: context.Background(), canon: m, pr: newProblem(m, Params{})}
				out, r, err := s.refine(clusters, "")
				if err != nil {
					t.Fatal(err)
				}
				emptied := len(r.st) - len(out)
				fresh, want, err := s.swapRefine(out, nil)
				if err != nil {
					t.Fatal(err)
				}
				kept, got, err := s.swapRefine(out, r)
				if err != nil {
					t.Fatal(err)
				}
				if got != want || !slices.EqualFunc(kept, fresh, slices.Equal) {
					t.Errorf("%s large=%v seed %d (%d clusters emptied): going on gives cost %+v, a new refiner %+v", md, large, seed, emptied, got, want)
				}
			}
		}
	}
}

// serialSwaps is the swap pass as one user after the other makes it, each
// swap weighed by adding and removing the rows (cstat.deltaIn, deltaOut),
// as the pass was before its swaps were weighed in blocks: a reference.
func (r *refiner) serialSwaps() int {
	pr := r.pr
	mem := r.members()
	ex := &expendables{r: r, mem: mem, list: make([][]int32, len(mem))}
	for c := range mem {
		ex.find(int32(c))
	}
	r.mod = make([]int32, len(r.st)) // makeSwap marks what it changes
	swaps, start := 0, r.total
	for phase := range 2 {
		if phase == 1 && !r.swapsPay(start) {
			return swaps
		}
		r.findMissing(func(p int32) bool { return inPhase(p, phase) })
		for p := int32(0); p < int32(pr.np); p++ {
			if !inPhase(p, phase) {
				continue
			}
			row := pr.row(p)
			for _, u := range pr.users(p) {
				a := r.cl[u]
				out := r.st[a].deltaOut(row, r.mode)
				r.st[a].remove(row)
				best, bestV := swapOption{c: -1}, int64(0)
				r.eachTarget(p, a, r.candidates(p), &r.tried, func(c int32) {
					in := out.add(r.st[c].deltaIn(row, r.mode))
					r.st[c].add(row)
					for _, v := range ex.list[c] {
						vrow := pr.urow(v)
						d := in.add(r.st[c].deltaOut(vrow, r.mode)).add(r.st[a].deltaIn(vrow, r.mode))
						if val := r.lam.of(d); val < bestV {
							best, bestV = swapOption{c, v, d}, val
						}
					}
					r.st[c].remove(row)
				})
				r.st[a].add(row)
				if best.c >= 0 {
					r.makeSwap(u, best, ex)
					swaps++
				}
			}
		}
	}
	return swaps
}

// TestSwapsAsSerial: the swap pass, its swaps weighed in blocks of points
// on 1 or 3 workers, makes the swaps of the reference serialSwaps, over
// several blocks, with the neighbour lists the Mondrian start builds.
func TestSwapsAsSerial(t *testing.T) {
	m := randomMatrix(4, 3*swapBlockPoints, 200, 4)
	clusters := runClusters(m.NumRows(), 3, 3)
	for _, md := range allModes {
		var want [][]int32
		for _, w := range []int{0, 1, 3} { // 0: the reference
			s := &state{p: withDefaults(Params{K: 3, Mode: md, Seed: 1, Workers: max(w, 1)}), ctx: context.Background(), canon: m, pr: newProblem(m, Params{})}
			if s.pr.np <= 2*swapBlockPoints {
				t.Fatalf("%d points: not three blocks", s.pr.np)
			}
			ix, err := knn.NewIndex(m, 1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.pr.nearestPoints(ix, 16, 1, 0); err != nil {
				t.Fatal(err)
			}
			r := s.newRefiner(clusters)
			r.indexCentres()
			r.findNearest()
			var n int
			if w == 0 {
				n = r.serialSwaps()
			} else if n, _, err = r.swapPass(); err != nil {
				t.Fatal(err)
			}
			if got := s.totalCost(r.clusters()); got != r.total || n == 0 {
				t.Fatalf("%s, %d workers: %d swaps; running cost %+v, recomputed %+v", md, w, n, r.total, got)
			}
			if w == 0 {
				want = r.clusters()
			} else if !slices.EqualFunc(want, r.clusters(), slices.Equal) {
				t.Errorf("%s: %d workers swap otherwise than one user after the other", md, w)
			}
		}
	}
}
