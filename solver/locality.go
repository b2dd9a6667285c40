package solver

import (
	"cmp"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver/internal/par"
)

// localityKeyRanks is how many of a row's most frequent features its
// locality key holds.
const localityKeyRanks = 4

// localityOrder reorders rows (m's rows in user-id order) so that rows
// whose most frequent features agree are next to each other: by their
// localityKeyRanks most frequent features (features ranked by the number of
// rows holding them, descending, then by id), compared lexicographically, a
// shorter list first; ties keep the user-id order. The solver numbers its
// users in this order, so neighbouring users share memory: every stage
// reads the features of users close to the one at hand, which keeps the
// reads in the CPU caches on inputs far larger than them. The order depends only
// on the rows' contents and user ids, never on the input row order, so
// releases stay independent of it.
func localityOrder(m *matrix.Matrix, rows []int32, workers int) []int32 {
	// Frequency rank of every feature, through its dense index.
	ids, idx := denseFeatures(m.Features)
	freq := make([]int64, len(ids))
	for _, f := range m.Features {
		freq[idx(f)]++
	}
	byFreq := make([]int32, len(ids))
	for i := range byFreq {
		byFreq[i] = int32(i)
	}
	slices.SortFunc(byFreq, func(a, b int32) int {
		if c := cmp.Compare(freq[b], freq[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // ids ascend with their dense index
	})
	// rank+1 per dense feature: 0 is left for "no feature", which sorts a
	// shorter list first.
	rank := make([]uint64, len(ids))
	for r, i := range byFreq {
		rank[i] = uint64(r) + 1
	}

	type keyed struct {
		k   [localityKeyRanks]uint64
		pos int32 // position in rows (user-id order)
	}
	ks := make([]keyed, len(rows))
	par.For(workers, len(rows), 4096, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			k := &ks[i]
			k.pos = int32(i)
			// The localityKeyRanks smallest ranks of the row, ascending
			// (insertion into a short sorted array).
			n := 0
			for _, f := range m.Row(int(rows[i])) {
				r := rank[idx(f)]
				if n == localityKeyRanks && r >= k.k[n-1] {
					continue
				}
				j := min(n, localityKeyRanks-1)
				for j > 0 && k.k[j-1] > r {
					k.k[j] = k.k[j-1]
					j--
				}
				k.k[j] = r
				n = min(n+1, localityKeyRanks)
			}
		}
	})
	par.SortFunc(workers, ks, func(a, b keyed) int {
		if c := slices.Compare(a.k[:], b.k[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	out := make([]int32, len(rows))
	for i, k := range ks {
		out[i] = rows[k.pos]
	}
	return out
}

// denseFeatures returns the distinct feature ids of features, ascending,
// and the function mapping an id to its index there (only for ids that
// occur): an array lookup when the largest id is small against the number
// of entries, else a binary search.
func denseFeatures(features []uint32) (ids []uint32, idx func(f uint32) int) {
	var maxF uint32
	for _, f := range features {
		maxF = max(maxF, f)
	}
	if int64(maxF) < 4*int64(len(features))+(1<<16) {
		seen := make([]bool, int64(maxF)+1)
		for _, f := range features {
			seen[f] = true
		}
		dense := make([]int32, len(seen))
		for f, ok := range seen {
			if ok {
				dense[f] = int32(len(ids))
				ids = append(ids, uint32(f))
			}
		}
		return ids, func(f uint32) int { return int(dense[f]) }
	}
	ids = slices.Clone(features)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	return ids, func(f uint32) int { i, _ := slices.BinarySearch(ids, f); return i }
}
