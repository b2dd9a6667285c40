package solver

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// referenceLocality is localityOrder written from its definition: each
// row's localityKeyRanks most frequent features (frequency descending, then
// id), compared as lists (a prefix first), ties by user id.
func referenceLocality(m *matrix.Matrix) []string {
	freq := map[uint32]int{}
	for _, f := range m.Features {
		freq[f]++
	}
	type row struct {
		user string
		key  []uint32
	}
	rows := make([]row, m.NumRows())
	for i := range rows {
		f := slices.Clone(m.Row(i))
		slices.SortFunc(f, func(a, b uint32) int {
			if c := cmp.Compare(freq[b], freq[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		rows[i] = row{m.Users[i], f[:min(len(f), localityKeyRanks)]}
	}
	slices.SortFunc(rows, func(a, b row) int {
		for j := 0; j < min(len(a.key), len(b.key)); j++ {
			if a.key[j] != b.key[j] {
				// the more frequent feature (then the lower id) first
				fa, fb := freq[a.key[j]], freq[b.key[j]]
				if fa != fb {
					return cmp.Compare(fb, fa)
				}
				return cmp.Compare(a.key[j], b.key[j])
			}
		}
		if c := cmp.Compare(len(a.key), len(b.key)); c != 0 {
			return c
		}
		return cmp.Compare(a.user, b.user)
	})
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.user
	}
	return out
}

func TestLocalityOrder(t *testing.T) {
	for _, c := range []struct {
		name      string
		n, cols   int
		idScale   uint32 // feature id multiplier: large ids take the sparse path
		maxDegree int
	}{
		{"dense ids", 400, 30, 1, 9},
		{"sparse ids", 400, 30, 1 << 26, 9},
		{"few columns, many ties", 300, 5, 1, 6},
		{"empty and single rows", 200, 50, 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(c.n)))
			m := matrix.New(c.n, 0)
			for i := 0; i < c.n; i++ {
				var f []uint32
				for j := r.IntN(c.maxDegree + 1); j > 0; j-- {
					f = append(f, uint32(r.IntN(c.cols))*c.idScale)
				}
				slices.Sort(f)
				m.Append(fmt.Sprintf("u%05d", r.IntN(1e5)*1000+i), slices.Compact(f))
			}
			want := referenceLocality(m)
			for _, workers := range []int{1, 3} {
				// Shuffled input rows give the same order of users.
				perm := r.Perm(c.n)
				pm := m.Permute(perm)
				byID, err := matrix.UserOrder(pm)
				if err != nil {
					t.Fatal(err)
				}
				got := localityOrder(pm, byID, workers)
				users := make([]string, len(got))
				for i, row := range got {
					users[i] = pm.Users[row]
				}
				if !slices.Equal(users, want) {
					t.Fatalf("workers %d: order differs from the reference\n got %v\nwant %v", workers, users[:min(20, len(users))], want[:min(20, len(want))])
				}
			}
		})
	}
}
