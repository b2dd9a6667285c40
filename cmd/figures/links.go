package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/smoothanon/smoothanon/internal/experiment"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// Link prediction on dblp, the learning experiment's second task: the
// label (whether two authors wrote together) is not in the anonymized
// rows. A share of the co-author edges is held out in both directions, the
// rest is anonymized, and each held-out edge and as many non-edges are
// scored by the Jaccard similarity of the two authors' released rows.
const (
	linkSet = "dblp"
	// linkHoldOut is the share of undirected edges held out.
	linkHoldOut = 0.01
	// linkSeed draws the held-out edges and the non-edges.
	linkSeed = 1
)

// links is the link-prediction measurement: the AUC (the chance that a
// held-out edge scores above a non-edge, ties counted half) of each method
// at each k.
type links struct {
	Rows     int          `json:"rows"`
	HeldOut  int          `json:"held_out_edges"`
	NonEdges int          `json:"non_edges"`
	Seeds    int          `json:"seeds"`
	Ks       []int        `json:"ks"`
	Original float64      `json:"original"`
	Curves   []learnCurve `json:"curves"`
}

// pair is two row indexes.
type pair struct{ u, v int32 }

// measureLinks runs the link prediction on dblp from p.raw.
func measureLinks(p params, log io.Writer) (*links, error) {
	src := experiment.Source{Raw: p.raw}
	m, err := src.Load(linkSet, 0)
	if err != nil {
		return nil, err
	}
	train, pos, neg, err := holdOut(m, linkHoldOut, linkSeed)
	if err != nil {
		return nil, err
	}
	l := &links{Rows: m.NumRows(), HeldOut: len(pos), NonEdges: len(neg), Seeds: p.linkSeeds, Ks: p.learnKs,
		Original: auc(train, pos, neg)}
	fmt.Fprintf(log, "links: %d rows, %d held-out edges, %d non-edges; original AUC %.4f\n", l.Rows, len(pos), len(neg), l.Original)
	ctx := context.Background()
	for _, md := range []struct {
		name  string
		seeds int
		solve func(k int, seed int64) (experiment.Outcome, error)
	}{
		{methodSmooth, p.linkSeeds, func(k int, seed int64) (experiment.Outcome, error) {
			return experiment.Solve(ctx, train, solver.Params{K: k, Mode: matrix.Smooth, Seed: seed})
		}},
		{methodNonSmooth, p.linkSeeds, func(k int, seed int64) (experiment.Outcome, error) {
			return experiment.Solve(ctx, train, solver.Params{K: k, Mode: matrix.NonSmooth, Seed: seed})
		}},
		{methodMondrian, 1, func(k int, _ int64) (experiment.Outcome, error) { return experiment.Mondrian(ctx, train, k) }},
	} {
		c := learnCurve{Method: md.name}
		for _, k := range p.learnKs {
			var s experiment.Stat
			for seed := int64(1); seed <= int64(md.seeds); seed++ {
				o, err := md.solve(k, seed)
				if err != nil {
					return nil, fmt.Errorf("links %s k=%d seed %d: %w", md.name, k, seed, err)
				}
				if !slices.Equal(o.Release.Users, train.Users) {
					return nil, fmt.Errorf("links %s k=%d: the release does not hold the rows in their order", md.name, k)
				}
				s.Add(auc(o.Release, pos, neg))
			}
			c.add(s)
			fmt.Fprintf(log, "links %s k=%d: AUC %.4f ± %.4f (%d runs)\n", md.name, k, s.Mean(), s.SD(), s.N())
		}
		l.Curves = append(l.Curves, c)
	}
	return l, nil
}

// holdOut draws share of m's undirected edges (u < v with v in u's row and
// u in v's; m's rows are named by their node ids, features are node ids)
// and removes both directions of each: it returns the remaining matrix, the
// held-out edges and as many pairs of distinct rows that are not edges of
// m, all as row indexes, drawn with seed.
func holdOut(m *matrix.Matrix, share float64, seed uint64) (*matrix.Matrix, []pair, []pair, error) {
	rowOf := make(map[uint32]int32, m.NumRows())
	for i, u := range m.Users {
		id, err := strconv.ParseUint(u, 10, 32)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("row %d: user id %q is not a node id", i, u)
		}
		rowOf[uint32(id)] = int32(i)
	}
	rng := rand.New(rand.NewPCG(seed, 0x1ea4))
	held := map[pair]bool{}
	var pos []pair
	for i := range m.NumRows() {
		for _, f := range m.Row(i) {
			j, ok := rowOf[f]
			if !ok || j <= int32(i) || !hasFeature(m.Row(int(j)), mustNode(m.Users[i])) {
				continue
			}
			if rng.Float64() < share {
				e := pair{int32(i), j}
				held[e] = true
				pos = append(pos, e)
			}
		}
	}
	train := matrix.New(m.NumRows(), int(m.NumEntries()))
	for i := range m.NumRows() {
		var row []uint32
		for _, f := range m.Row(i) {
			j := rowOf[f]
			if !held[pair{int32(i), j}] && !held[pair{j, int32(i)}] {
				row = append(row, f)
			}
		}
		train.Append(m.Users[i], row)
	}
	var neg []pair
	for len(neg) < len(pos) {
		u, v := int32(rng.IntN(m.NumRows())), int32(rng.IntN(m.NumRows()))
		if u == v {
			continue
		}
		if hasFeature(m.Row(int(u)), mustNode(m.Users[v])) {
			continue
		}
		neg = append(neg, pair{min(u, v), max(u, v)})
	}
	return train, pos, neg, nil
}

// hasFeature reports whether the sorted row holds f.
func hasFeature(row []uint32, f uint32) bool {
	_, ok := slices.BinarySearch(row, f)
	return ok
}

// mustNode is a user id holdOut has already parsed.
func mustNode(u string) uint32 {
	id, _ := strconv.ParseUint(u, 10, 32)
	return uint32(id)
}

// auc scores pos and neg by the Jaccard similarity of their rows in r and
// returns the chance a pos pair scores above a neg pair, ties counted half.
func auc(r *matrix.Matrix, pos, neg []pair) float64 {
	type scored struct {
		s   float64
		pos bool
	}
	all := make([]scored, 0, len(pos)+len(neg))
	for _, e := range pos {
		all = append(all, scored{rowJaccard(r.Row(int(e.u)), r.Row(int(e.v))), true})
	}
	for _, e := range neg {
		all = append(all, scored{rowJaccard(r.Row(int(e.u)), r.Row(int(e.v))), false})
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(a.s, b.s) })
	// Sum the pos pairs' mid-ranks over runs of equal scores.
	var rankSum float64
	for i := 0; i < len(all); {
		j := i
		np := 0
		for j < len(all) && all[j].s == all[i].s {
			if all[j].pos {
				np++
			}
			j++
		}
		rankSum += float64(np) * (float64(i+j+1) / 2)
		i = j
	}
	np, nn := float64(len(pos)), float64(len(neg))
	return (rankSum - np*(np+1)/2) / (np * nn)
}

// rowJaccard is |a ∩ b| / |a ∪ b| of two sorted rows, 0 when both are empty.
func rowJaccard(a, b []uint32) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	common := verify.CountCommon(a, b)
	return float64(common) / float64(len(a)+len(b)-common)
}
