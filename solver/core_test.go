package solver

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

func TestEachSubset(t *testing.T) {
	for _, c := range []struct {
		n, r int
		want []uint32
	}{
		{4, 0, []uint32{0}},
		{4, 4, []uint32{0b1111}},
		{4, 1, []uint32{0b0001, 0b0010, 0b0100, 0b1000}},
		{4, 2, []uint32{0b0011, 0b0101, 0b0110, 0b1001, 0b1010, 0b1100}},
		{5, 3, nil}, // checked by count below
	} {
		var got []uint32
		eachSubset(c.n, c.r, func(m uint32) { got = append(got, m) })
		if c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("eachSubset(%d, %d) = %b, want %b", c.n, c.r, got, c.want)
		}
		if int64(len(got)) != binomial(c.n, c.r) {
			t.Errorf("eachSubset(%d, %d): %d masks, want C = %d", c.n, c.r, len(got), binomial(c.n, c.r))
		}
		for i, m := range got {
			if bits.OnesCount32(m) != c.r || m >= 1<<c.n || (i > 0 && m <= got[i-1]) {
				t.Errorf("eachSubset(%d, %d): mask %b out of place", c.n, c.r, m)
			}
		}
	}
	if got := binomial(16, 8); got != 12870 {
		t.Errorf("binomial(16, 8) = %d", got)
	}
}

// rowsMatrix builds a matrix of the given rows, users u00, u01, ….
func rowsMatrix(rows ...[]uint32) *matrix.Matrix {
	m := matrix.New(len(rows), 0)
	for i, r := range rows {
		m.Append(fmt.Sprintf("u%02d", i), r)
	}
	return m
}

func repeat(n int, row []uint32) [][]uint32 {
	out := make([][]uint32, n)
	for i := range out {
		out[i] = row
	}
	return out
}

func TestCoreGroups(t *testing.T) {
	cat := func(parts ...[][]uint32) [][]uint32 { return slices.Concat(parts...) }
	for _, c := range []struct {
		name string
		k    int32
		rows [][]uint32
		want [][]int32 // users per group, each ascending
	}{
		{"identical rows at level 0", 3,
			cat(repeat(3, []uint32{1, 2}), repeat(3, []uint32{3, 4})),
			[][]int32{{0, 1, 2}, {3, 4, 5}}},
		{"one feature apart at level 1", 8,
			cat(repeat(3, []uint32{1, 2, 3}), repeat(5, []uint32{1, 2, 4})),
			[][]int32{{0, 1, 2, 3, 4, 5, 6, 7}}},
		{"level 0 before level 1; the rest joins the last group", 4,
			cat(repeat(4, []uint32{1, 2, 3}), repeat(2, []uint32{1, 2, 4}), repeat(2, []uint32{1, 2, 5}), [][]uint32{{7, 8, 9}}),
			[][]int32{{0, 1, 2, 3}, {4, 5, 6, 7, 8}}},
		{"heaviest core first", 4,
			// {1,2} is held by 6 users, {1,3} by 5; user 0 holds both.
			cat([][]uint32{{1, 2, 3}}, repeat(3, []uint32{1, 2, 4}), repeat(2, []uint32{1, 2, 6}),
				repeat(2, []uint32{1, 3, 5}), repeat(2, []uint32{1, 3, 7})),
			[][]int32{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9}}},
		{"rows of any length meet in the empty core", 2,
			cat(repeat(2, []uint32{1, 2}), [][]uint32{{3}, {4, 5, 6}}),
			[][]int32{{0, 1}, {2, 3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr := newProblem(rowsMatrix(c.rows...), Params{})
			got := pr.coreGroups(c.k)
			for _, g := range got {
				slices.Sort(g)
			}
			checkCover(t, got, len(c.rows), c.k)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("groups %v, want %v", got, c.want)
			}
		})
	}
}

// checkCover fails unless groups hold users 0..n−1 once each, k or more
// per group.
func checkCover(t *testing.T, groups [][]int32, n int, k int32) {
	t.Helper()
	seen := make([]bool, n)
	for _, g := range groups {
		if len(g) < int(k) {
			t.Errorf("group of %d users < k = %d", len(g), k)
		}
		for _, u := range g {
			if seen[u] {
				t.Fatalf("user %d in two groups", u)
			}
			seen[u] = true
		}
	}
	for u, s := range seen {
		if !s {
			t.Fatalf("user %d in no group", u)
		}
	}
}

// TestCoreGroupsBudget: rows of coreMaxDeg distinct features stop at the
// first level past coreBudget (C(16, 3) = 560 cores a point); the points
// still free, which hold k users or more, form a group of their own
// beside the level-0 group of identical rows; nothing is lost.
func TestCoreGroupsBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := repeat(5, []uint32{1000, 1001})
	for range 300 {
		row := make([]uint32, 0, coreMaxDeg)
		for _, f := range r.Perm(200)[:coreMaxDeg] {
			row = append(row, uint32(f))
		}
		slices.Sort(row)
		rows = append(rows, row)
	}
	pr := newProblem(rowsMatrix(rows...), Params{})
	if pr.coreCount([]int32{int32(pr.np - 1)}, 3) <= coreBudget {
		t.Fatalf("C(16, 3) = %d within the budget: the test needs a level past it", pr.coreCount([]int32{int32(pr.np - 1)}, 3))
	}
	got := pr.coreGroups(5)
	checkCover(t, got, len(rows), 5)
	if len(got) != 2 || len(got[0]) != 5 || len(got[1]) != 300 {
		sizes := make([]int, len(got))
		for i, g := range got {
			sizes[i] = len(g)
		}
		t.Errorf("group sizes %v, want [5 300]: the identical rows, then the free points", sizes)
	}
}

// TestHeavyCores: under forced collisions every core lists its points
// once, ascending, with their users counted once, heaviest first.
func TestHeavyCores(t *testing.T) {
	withCoreHash(t, func(row []int32, mask uint32) uint64 { return uint64(bits.OnesCount32(mask) % 2) })
	pr := newProblem(randomMatrix(4, 300, 20, 3), Params{})
	free := make([]int32, pr.np)
	for p := range free {
		free[p] = int32(p)
	}
	for d := range 3 {
		offers, heavy := pr.heavyCores(free, d, 4)
		if len(heavy) == 0 {
			t.Fatalf("level %d: no heavy core", d)
		}
		for i, c := range heavy {
			var w int32
			for j, o := range offers[c.lo:c.hi] {
				if j > 0 && o.p <= offers[int(c.lo)+j-1].p {
					t.Fatalf("level %d core %d: points not strictly ascending", d, i)
				}
				w += pr.w[o.p]
			}
			if w != c.w || w < 4 {
				t.Errorf("level %d core %d: %d users, recorded %d", d, i, w, c.w)
			}
			if i > 0 && c.w > heavy[i-1].w {
				t.Errorf("level %d: core %d heavier than the one before", d, i)
			}
		}
	}
}

// TestCoreCandidate: improve builds core groups where rows are short and
// not where one row is longer than coreMaxDeg (the stages it reports).
func TestCoreCandidate(t *testing.T) {
	for _, c := range []struct {
		deg  int
		want bool
	}{{6, true}, {coreMaxDeg + 1, false}} {
		m := randomMatrix(5, 300, 40, c.deg/2)
		if c.deg > coreMaxDeg {
			feats := make([]uint32, c.deg)
			for i := range feats {
				feats[i] = uint32(i)
			}
			m.Append("zz-long", feats)
		}
		seen := false
		solveCheckedProgress(t, m, Params{K: 5, Seed: 1}, func(stage string, _, _ int) {
			seen = seen || stage == "split (candidate 4/4)"
		})
		if seen != c.want {
			t.Errorf("max degree %d: core candidate ran = %v, want %v", c.deg, seen, c.want)
		}
	}
}

// TestCoreGroupsCollisions: when every core but a whole row hashes
// alike, level 1 offers one core that every free point offers several
// times; it must list each point once, and the groups stay valid.
func TestCoreGroupsCollisions(t *testing.T) {
	withCoreHash(t, func(row []int32, mask uint32) uint64 {
		if bits.OnesCount32(mask) == len(row) {
			return hashCore(row, mask)
		}
		return 7
	})
	m := randomMatrix(3, 200, 30, 4)
	pr := newProblem(m, Params{})
	got := pr.coreGroups(6)
	checkCover(t, got, m.NumRows(), 6)
}

// withCoreHash replaces coreHash with h for the rest of the test.
func withCoreHash(t *testing.T, h func([]int32, uint32) uint64) {
	old := coreHash
	coreHash = h
	t.Cleanup(func() { coreHash = old })
}
