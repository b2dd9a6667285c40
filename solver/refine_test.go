package solver

import (
	"context"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
)

// TestKeptNearestStayRight: the nearest centres markStale keeps from the
// previous index are those a search in the new index finds, through move
// and dissolve passes; some are kept (the point of keeping them) and some
// searched again. Every point findNearest must search is searched.
func TestKeptNearestStayRight(t *testing.T) {
	m, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 4000, Columns: 5000, MeanDegree: 8, Zipf: 1.1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	pr := newProblem(m, Params{})
	for _, md := range allModes {
		s := &state{p: withDefaults(Params{K: 4, Mode: md, Seed: 1}), ctx: context.Background(), canon: m, pr: pr}
		// Clusters of 4 to 9 users in canonical order: many moves to make.
		r := s.newRefiner(runClusters(pr.n, 4, 6))
		fresh := make([]int32, refineCandidates)
		kept, searched := 0, 0
		for pass := 0; pass < 4; pass++ {
			r.indexCentres()
			stale := 0
			for p := int32(0); p < int32(pr.np); p++ {
				if r.candidates(p)[0] == notFound {
					stale++
				}
			}
			r.findNearest()
			for p := int32(0); p < int32(pr.np); p++ {
				top := r.candidates(p)
				if top[0] == notFound {
					for _, u := range pr.users(p) {
						if r.st[r.cl[u]].s > r.k {
							t.Fatalf("%s pass %d: point %d has a movable user and was not searched", md, pass, p)
						}
					}
					continue
				}
				r.scratch(0).nearest(pr.row(p), r.cpost, r.clen, fresh)
				if !slices.Equal(top, fresh) {
					t.Fatalf("%s pass %d: point %d lists %v, a search finds %v", md, pass, p, top, fresh)
				}
			}
			if pass > 0 {
				kept += pr.np - stale
				searched += stale
			}
			var moved int
			before := slices.Clone(r.cl)
			if pass == 2 {
				moved = r.dissolvePass()
			} else if moved, err = r.movePass(); err != nil {
				t.Fatal(err)
			}
			changed := 0
			for u := range before {
				if before[u] != r.cl[u] {
					changed++
				}
			}
			// A user can move twice (into a cluster dissolved later), so
			// the moves are at least the users that changed cluster.
			if pass == 2 && (moved < changed || changed == 0) {
				t.Errorf("%s: dissolvePass returned %d moves, and %d users changed cluster", md, moved, changed)
			}
			t.Logf("%s pass %d: %d of %d points stale, %d users moved", md, pass, stale, pr.np, moved)
		}
		if kept == 0 || searched == 0 {
			t.Errorf("%s: %d lists kept, %d marked stale after the first index; the test needs both", md, kept, searched)
		}
	}
}

// TestMaxDissolvePasses pins the per-mode bound of
// docs/decisions/013-dissolve-passes.md: later dissolve passes pay in
// non-smooth mode only.
func TestMaxDissolvePasses(t *testing.T) {
	for _, c := range []struct {
		mode matrix.Mode
		want int
	}{{matrix.Smooth, 1}, {matrix.NonSmooth, 3}} {
		if got := maxDissolvePasses(c.mode); got != c.want {
			t.Errorf("maxDissolvePasses(%v) = %d, want %d", c.mode, got, c.want)
		}
	}
}
