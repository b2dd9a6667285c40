package solver

import (
	"container/heap"
	"github.com/smoothanon/smoothanon/solver/internal/knn"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
)

// facilityCosts returns, per canonical user, the opening cost of a
// facility at it: 2α/(1−α) (α = 1/β) times the sum of the distances to its
// βk nearest other users (exact, knn.KNearest; all other users when there
// are fewer). A zero sum gives cost 0 even when the factor is infinite.
func (s *state) facilityCosts() ([]float64, error) {
	g, st, err := knn.KNearest(s.canon, s.p.K*s.p.Beta, knn.Options{Workers: s.p.Workers})
	if err != nil {
		return nil, err
	}
	s.strategy = st.Strategy
	s.nbr, s.nbrK = g.Idx, g.K
	factor := openingFactor(s.p.Beta)
	cost := make([]float64, s.pr.n)
	for u := range cost {
		_, dist := g.Row(u)
		sum := 0
		for _, d := range dist {
			sum += int(d)
		}
		if sum > 0 {
			cost[u] = factor * float64(sum)
		}
	}
	return cost, nil
}

// run is one Meyerson pass.
type run struct {
	fs     *knn.Facilities
	assign []int32 // canonical user -> facility (the user it is at)
	cost   float64
	index  int
}

// meyerson runs Restarts random orders (in parallel, each with its own
// generator seeded by (Seed, restart)) and keeps the cheapest, ties going to
// the lowest restart.
func (s *state) meyerson(cost []float64) (*run, error) {
	R := s.p.Restarts
	base := knn.NewFacilities(s.canon, knn.Options{Workers: s.p.Workers})
	w := min(workers(s.p.Workers), R)
	var mu sync.Mutex
	var best *run
	done := 0
	var wg sync.WaitGroup
	next := make(chan int, R)
	for r := 0; r < R; r++ {
		next <- r
	}
	close(next)
	s.progress("restarts", 0, R)
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				if s.ctx.Err() != nil {
					return
				}
				ru := s.meyersonOnce(base.Empty(), cost, r)
				mu.Lock()
				if best == nil || ru.cost < best.cost || (ru.cost == best.cost && ru.index < best.index) {
					best = ru
				}
				done++
				s.progress("restarts", done, R)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	s.progress("restarts", R, R)
	return best, nil
}

func (s *state) meyersonOnce(fs *knn.Facilities, cost []float64, r int) *run {
	pr := s.pr
	rng := rand.New(rand.NewPCG(uint64(s.p.Seed), uint64(r)+0x9e3779b97f4a7c15))
	order := make([]int32, pr.n)
	for i := range order {
		order[i] = int32(i)
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	ru := &run{fs: fs, assign: make([]int32, pr.n), index: r}
	for _, u := range order {
		g, d, ok := fs.Nearest(u)
		open := false
		switch {
		case !ok:
			open = true
		case d == 0:
			// Distance 0 joins, even when the opening cost is 0 (0/0).
		case cost[u] == 0:
			open = true // min(1, d/0) = 1
		default:
			open = rng.Float64()*cost[u] < float64(d)
		}
		if open {
			fs.Add(u)
			g = u
			ru.cost += cost[u]
		} else {
			ru.cost += float64(d)
		}
		ru.assign[u] = g
	}
	return ru
}

// smallHeap orders facilities by (clients, number).
type smallHeap struct {
	g, size []int32
}

func (h *smallHeap) Len() int { return len(h.g) }
func (h *smallHeap) Less(i, j int) bool {
	return h.size[i] < h.size[j] || (h.size[i] == h.size[j] && h.g[i] < h.g[j])
}
func (h *smallHeap) Swap(i, j int) {
	h.g[i], h.g[j] = h.g[j], h.g[i]
	h.size[i], h.size[j] = h.size[j], h.size[i]
}
func (h *smallHeap) Push(x any) {
	e := x.([2]int32)
	h.g = append(h.g, e[0])
	h.size = append(h.size, e[1])
}
func (h *smallHeap) Pop() any {
	n := len(h.g) - 1
	e := [2]int32{h.g[n], h.size[n]}
	h.g, h.size = h.g[:n], h.size[:n]
	return e
}

// closeSmall closes facilities with fewer than k clients, fewest clients
// first (ties: lowest facility number), moving each client to the nearest
// open facility, until every open facility has at least k clients. It
// returns the clusters (canonical users, increasing).
func (s *state) closeSmall(ru *run) [][]int32 {
	pr, fs, k := s.pr, ru.fs, int32(s.p.K)
	members := make(map[int32][]int32)
	for u, g := range ru.assign {
		members[g] = append(members[g], int32(u))
	}
	facs := make([]int32, 0, len(members))
	for g := range members {
		facs = append(facs, g)
	}
	sort.Slice(facs, func(a, b int) bool { return facs[a] < facs[b] })
	h := &smallHeap{}
	for _, g := range facs {
		if sz := int32(len(members[g])); sz < k {
			heap.Push(h, [2]int32{g, sz})
		}
	}
	total := h.Len()
	s.progress("close", 0, total)
	target := make(map[int32]int32) // point -> facility, per closing
	for h.Len() > 0 {
		e := heap.Pop(h).([2]int32)
		g := e[0]
		sz := int32(len(members[g]))
		if !fs.IsOpen(g) || sz >= k {
			continue
		}
		if sz != e[1] {
			heap.Push(h, [2]int32{g, sz})
			continue
		}
		if fs.Len() == 1 {
			break // cannot happen when k <= rows
		}
		fs.Remove(g)
		clear(target)
		for _, u := range members[g] {
			p := pr.userPoint[u]
			t, ok := target[p]
			if !ok {
				t, _, _ = fs.Nearest(u)
				target[p] = t
			}
			members[t] = append(members[t], u)
		}
		delete(members, g)
	}
	s.progress("close", total, total)
	var out [][]int32
	for _, g := range facs {
		if mem, ok := members[g]; ok && fs.IsOpen(g) && len(mem) > 0 {
			slices.Sort(mem)
			out = append(out, mem)
		}
	}
	return out
}
