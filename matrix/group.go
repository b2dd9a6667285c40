package matrix

import (
	"slices"
)

// grouper gathers the rows of a long-form input, one (user, feature)
// pair each, into one row per user: users in the order of their first
// pair, features sorted, repeated pairs dropped. It holds every pair in
// memory (8 bytes each, plus the distinct user ids): the one-process
// reader's way; the pipeline groups in a shuffle.
type grouper struct {
	index map[string]uint32
	users []string
	pairs []uint64 // user index << 32 | feature
}

func newGrouper() *grouper { return &grouper{index: map[string]uint32{}} }

// add is a RowFunc taking the pairs of one row.
func (g *grouper) add(user string, feats []uint32) error {
	u, ok := g.index[user]
	if !ok {
		u = uint32(len(g.users))
		g.index[user] = u
		g.users = append(g.users, user)
	}
	for _, f := range feats {
		g.pairs = append(g.pairs, uint64(u)<<32|uint64(f))
	}
	return nil
}

// matrix returns the grouped rows, the pairs seen and the repeated pairs
// dropped.
func (g *grouper) matrix() (*Matrix, int64, int64) {
	seen := int64(len(g.pairs))
	slices.Sort(g.pairs)
	g.pairs = slices.Compact(g.pairs)
	m := New(len(g.users), len(g.pairs))
	m.Users = append(m.Users, g.users...)
	i := 0
	for u := range g.users {
		for i < len(g.pairs) && g.pairs[i]>>32 == uint64(u) {
			m.Features = append(m.Features, uint32(g.pairs[i]))
			i++
		}
		m.Offsets = append(m.Offsets, int64(len(m.Features)))
	}
	return m, seen, seen - int64(len(g.pairs))
}
