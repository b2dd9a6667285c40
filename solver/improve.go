package solver

import (
	"fmt"
	"sync"

	"github.com/smoothanon/smoothanon/internal/mondrian"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// improve keeps the best of four candidate clusterings: the one whose
// release has the highest Jaccard (ties: the earlier candidate):
//
//  1. the clusters as they are, unrefined: the improved release is never
//     worse than the paper's;
//  2. the clusters after split, refined (splitting lowers the cost of each
//     large cluster at once; refine's dissolve pass merges what split cut
//     too finely);
//  3. the Mondrian partition of the rows (internal/mondrian) after split,
//     refined: groups cut on shared features, which the Hamming facility
//     costs miss on power-law lists;
//  4. where no row has more than coreMaxDeg features, the core groups
//     (core.go) after split, refined: rows grouped by the features they
//     share, the shape of the best releases of one-hot tables;
//  5. with sensitive features, the sensitive strata (sensitiveStrata)
//     after split, refined: parts that show the sensitive features their
//     members share, which moves of one user at a time do not reach.
//
// The clusters as they are, refined without split, are not a candidate:
// since refine has its dissolve pass they never win, and refining them
// cost a large share of the solve (see
// docs/decisions/012-jaccard-objective.md).
//
// Candidates are computed concurrently unless Workers is 1; none modifies
// the clusters. Under StartMondrian only candidates 3 and 4 are computed
// (and clusters is nil).
func (s *state) improve(clusters [][]int32) ([][]int32, error) {
	// Candidates in tie order. Candidates 2 to 4 are mostly sequential
	// local searches, so they run at once unless Workers is 1, and each
	// reports its split and refine progress under its own stage names
	// (see Progress).
	cands := []func(tag string) ([][]int32, *refiner, error){
		func(string) ([][]int32, *refiner, error) { return clusters, nil, nil },
		func(tag string) ([][]int32, *refiner, error) { return s.refine(s.split(clusters, tag), tag) },
		func(tag string) ([][]int32, *refiner, error) {
			part, common, _, err := mondrian.Partition(s.ctx, s.canon, s.p.K)
			if err != nil {
				return nil, nil, err
			}
			mc := make([][]int32, len(common))
			for u, c := range part {
				mc[c] = append(mc[c], int32(u))
			}
			return s.refine(s.split(mc, tag), tag)
		},
		func(tag string) ([][]int32, *refiner, error) {
			if s.pr.maxDeg > coreMaxDeg {
				return nil, nil, nil
			}
			return s.refine(s.split(s.pr.coreGroups(int32(s.p.K)), tag), tag)
		},
	}
	if s.pr.nfn < int32(s.pr.nf) {
		cands = append(cands, func(tag string) ([][]int32, *refiner, error) {
			strata, err := s.sensitiveStrata()
			if strata == nil || err != nil {
				return nil, nil, err
			}
			return s.refine(s.split(strata, tag), tag)
		})
	}
	if s.p.Start == StartMondrian {
		cands[0], cands[1] = nil, nil // no Meyerson clusters to start from
	}
	out := make([][][]int32, len(cands))
	refs := make([]*refiner, len(cands))
	errs := make([]error, len(cands))
	costs := make([]cost, len(cands))
	run := func(i int) {
		if cands[i] == nil {
			return
		}
		out[i], refs[i], errs[i] = cands[i](fmt.Sprintf(" (candidate %d/%d)", i+1, len(cands)))
		switch {
		case refs[i] != nil:
			costs[i] = refs[i].total // kept exact through every move
		case errs[i] == nil && out[i] != nil:
			costs[i] = s.totalCost(out[i])
		}
	}
	if par.Workers(s.p.Workers) == 1 {
		for i := range cands {
			run(i)
		}
	} else {
		var wg sync.WaitGroup
		for i := range cands {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(i)
			}()
		}
		wg.Wait()
	}
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
	}
	best := bestCandidate(s.pr.entries, out, costs)
	r := refs[best]
	clear(refs) // the losers' refiners are garbage from here
	clusters, total, err := s.swapRefine(out[best], r)
	if err != nil {
		return nil, err
	}
	return s.resolveEmpty(clusters, total)
}

// bestCandidate is the index of the non-nil candidate whose release, of
// cost costs[i], has the highest Jaccard over entries input entries (ties:
// the earlier one). The Jaccard is compared directly: this is the final
// choice between complete releases, not a step of a search.
func bestCandidate(entries int64, cands [][][]int32, costs []cost) int {
	best := -1
	for i, c := range cands {
		if c != nil && (best < 0 || jaccardLess(entries, costs[best], costs[i])) {
			best = i
		}
	}
	return best
}

// totalCost is the suppressed and created entries of a clustering, costed
// in parallel: the unrefined candidate's (the refined ones' cost is their
// refiner's running total).
func (s *state) totalCost(clusters [][]int32) cost {
	w := par.Workers(s.p.Workers)
	type scratch struct {
		cnt, touched []int32
		c            cost
	}
	sc := make([]scratch, w)
	par.For(w, len(clusters), 1024, func(worker, lo, hi int) {
		x := &sc[worker]
		if x.cnt == nil {
			x.cnt = make([]int32, s.pr.nf)
		}
		for _, mem := range clusters[lo:hi] {
			x.c = x.c.add(s.pr.costOf(mem, s.p.Mode, x.cnt, &x.touched))
		}
	})
	var c cost
	for i := range sc {
		c = c.add(sc[i].c)
	}
	return c
}
