package solver

import (
	"github.com/smoothanon/smoothanon/matrix"
)

// resolveEmpty solves again, as an input of their own, the users of the
// clusters whose release is empty (every entry suppressed), and keeps the
// clusters it finds for them when the whole release's Jaccard is higher;
// the other clusters stay as they are. total is the cost of clusters.
//
// Users no cluster could serve end up together in clusters with empty
// centres: on dblp a fifth of the users. Solved on their own, their
// neighbourhoods, facility costs and candidate clusterings are their own,
// and many of them form clusters that keep features. The merged release
// is valid: each new cluster has at least k users and keeps only features
// that at least half (non-smooth: all) of it hold. A second round gains
// almost nothing, so the nested solve does not resolve its own (see
// docs/decisions/018-resolve-empty.md).
func (s *state) resolveEmpty(clusters [][]int32, total cost) ([][]int32, error) {
	if s.nested {
		return clusters, nil
	}
	pr := s.pr
	cnt := make([]int32, pr.nf)
	var touched []int32
	var keepers [][]int32
	var pool []int32
	var poolCost cost
	for _, mem := range clusters {
		c := pr.costOf(mem, s.p.Mode, cnt, &touched)
		if c.s > 0 && c.s == pr.entriesOf(mem) { // nothing kept, so nothing created
			pool = append(pool, mem...)
			poolCost = poolCost.add(c)
			continue
		}
		keepers = append(keepers, mem)
	}
	// A pool of every user is the input the clusters came from, and one
	// under 2k users can only form the one cluster it is: the solve would
	// find them again.
	if len(pool) == 0 || len(pool) == pr.n || len(pool) < 2*s.p.K {
		return clusters, nil
	}
	sub := matrix.New(len(pool), int(poolCost.s))
	for _, u := range pool {
		sub.Append(s.canon.Users[u], s.canon.Row(int(u)))
	}
	p := s.p
	// The pool's own solve starts from both clusterings whatever the
	// outer start: it is cheap next to the outer solve, and so
	// StartMondrian's release is as good as StartBoth's wherever Mondrian
	// wins.
	p.Start = StartBoth
	var progress Progress
	if s.progressTo != nil {
		progress = func(stage string, done, total int) { s.progress("resolve: "+stage, done, total) }
	}
	res, err := solve(s.ctx, sub, p, progress, true)
	if err != nil {
		return nil, err
	}
	fresh := make([][]int32, res.Info.GetClusters()) // numbered 0..clusters-1
	for i, c := range res.Cluster {
		fresh[c] = append(fresh[c], pool[i])
	}
	if !jaccardLess(pr.entries, total, total.minus(poolCost).add(s.totalCost(fresh))) {
		return clusters, nil
	}
	return append(keepers, fresh...), nil
}
