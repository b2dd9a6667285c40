package solver

import (
	"slices"

	"github.com/smoothanon/smoothanon/solver/internal/knn"
)

// knnFacilities runs a restart's facilities on knn.Facilities, over the
// input permuted into the restart's processing order: then "lowest row",
// knn's tie rule, is "earliest opened", the facSet tie rule, and both give
// the same clustering. knn's prefix-filtered search with entry signatures,
// over lists of the open facilities only, stays faster on large power-law
// data (see knnFacilitiesLoad).
type knnFacilities struct {
	f      *knn.Facilities
	rowOf  []int32 // canonical user -> row of the permuted input
	facRow []int32 // facility number -> row
	rowFac []int32 // row -> facility number, -1 when none
	closed []bool
}

func (k *knnFacilities) count() int            { return len(k.facRow) }
func (k *knnFacilities) isClosed(g int32) bool { return k.closed[g] }
func (k *knnFacilities) startClosing()         {}
func (k *knnFacilities) close(g int32) {
	k.closed[g] = true
	k.f.Remove(k.facRow[g])
}
func (k *knnFacilities) nearestOpen(u int32) int32 {
	row, _, ok := k.f.Nearest(k.rowOf[u])
	if !ok {
		return -1
	}
	return k.rowFac[row]
}

// meyersonOnceKNN is meyersonOnce on knnFacilities; same random stream,
// same decisions.
func (s *state) meyersonOnceKNN(cost []float64, r int) *run {
	pr := s.pr
	rng, order := restartOrder(s.p.Seed, r, pr.n)
	perm := make([]int, pr.n)
	kf := &knnFacilities{rowOf: make([]int32, pr.n), rowFac: make([]int32, pr.n)}
	for i, u := range order {
		perm[i] = int(u)
		kf.rowOf[u] = int32(i)
		kf.rowFac[i] = -1
	}
	kf.f = knn.NewFacilities(s.canon.Permute(perm), knn.Options{Workers: 1})
	if s.graph != nil {
		if err := kf.f.UseNeighbours(permuteGraph(s.graph, order, kf.rowOf)); err != nil {
			panic(err) // the graph is of s.canon: cannot happen
		}
	}
	ru := &run{fs: kf, assign: make([]int32, pr.n), index: r}
	for i, u := range order {
		p := pr.userPoint[u]
		row, d, ok := kf.f.Nearest(int32(i))
		open := opens(rng, ok, d, cost[p])
		var g int32
		if open {
			kf.f.Add(int32(i))
			g = int32(len(kf.facRow))
			kf.facRow = append(kf.facRow, int32(i))
			kf.closed = append(kf.closed, false)
			kf.rowFac[i] = g
			ru.cost += cost[p]
		} else {
			g = kf.rowFac[row]
			ru.cost += float64(d)
		}
		ru.assign[u] = g
	}
	return ru
}

// permuteGraph is the KNearest graph g of the canonical rows renumbered for
// the input permuted so that row i is canonical user order[i] (rowOf is the
// inverse). Each list is re-sorted by (distance, new row): the rows nearer
// than a list's last distance are all listed whatever the numbering, so the
// result is exactly the KNearest graph of the permuted input up to which
// rows at the last distance are listed, which UseNeighbours only uses as a
// bound.
func permuteGraph(g *knn.Graph, order, rowOf []int32) *knn.Graph {
	K := g.K
	out := &knn.Graph{K: K, Idx: make([]int32, len(g.Idx)), Dist: make([]int32, len(g.Dist))}
	keys := make([]uint64, K)
	for i, u := range order {
		idx, dist := g.Row(int(u))
		for j := range idx {
			keys[j] = uint64(dist[j])<<32 | uint64(rowOf[idx[j]])
		}
		slices.Sort(keys)
		oi, od := out.Row(i)
		for j, k := range keys {
			oi[j], od[j] = int32(uint32(k)), int32(k>>32)
		}
	}
	return out
}
