package baseline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

// randomMatrix has n users u0000.. with about deg of cols features each,
// the first features more frequent than the last.
func randomMatrix(seed uint64, n, cols, deg int) *matrix.Matrix {
	r := rand.New(rand.NewPCG(seed, 7))
	m := matrix.New(n, n*deg)
	for i := 0; i < n; i++ {
		var f []uint32
		for j := r.IntN(2*deg + 1); j > 0; j-- {
			f = append(f, uint32(r.IntN(1+r.IntN(cols))))
		}
		slices.Sort(f)
		m.Append(fmt.Sprintf("u%04d", i), slices.Compact(f))
	}
	return m
}

func TestCheckMondrianParams(t *testing.T) {
	for _, c := range []struct {
		p    MondrianParams
		rows int
		want string // "" = valid
	}{
		{MondrianParams{K: 1}, 1, ""},
		{MondrianParams{K: 8}, 100, ""},
		{MondrianParams{K: 0}, 100, "k = 0"},
		{MondrianParams{K: -3}, 100, "k = -3"},
		{MondrianParams{K: 101}, 100, "k = 101 is larger than the number of rows (100)"},
	} {
		err := CheckMondrianParams(c.p, c.rows)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckMondrianParams(%+v, %d) = %v, want %q", c.p, c.rows, err, c.want)
		}
	}
}

// TestMondrianSmall: the cut closest to half wins, the lower feature on a
// tie, and a partition no feature can cut is released as its intersection.
func TestMondrianSmall(t *testing.T) {
	m := matrix.New(6, 0)
	m.Append("a", []uint32{1, 2, 9})
	m.Append("b", []uint32{1, 2})
	m.Append("c", []uint32{1, 3})
	m.Append("d", []uint32{1, 3, 9})
	m.Append("e", []uint32{3, 4})
	m.Append("f", []uint32{3, 4})
	// Of the 6 rows, features 1 and 3 are held by 4, features 2, 4 and 9
	// by 2: every cut is one row away from half, and the lowest feature,
	// 1, cuts {a b c d} from {e f}. In {a b c d}, features 2, 3 and 9 are
	// each held by exactly half; 2 cuts {a b} from {c d}. No feature cuts
	// a pair into two sides of 2.
	res, err := Mondrian(context.Background(), m, MondrianParams{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]uint32{{1, 2}, {1, 2}, {1, 3}, {1, 3}, {3, 4}, {3, 4}}
	for i, w := range want {
		if got := res.Release.Row(i); !slices.Equal(got, w) {
			t.Errorf("row %s = %v, want %v", m.Users[i], got, w)
		}
	}
	if !slices.Equal(res.Partition, []int32{0, 0, 1, 1, 2, 2}) {
		t.Errorf("partitions %v, want [0 0 1 1 2 2] (numbered by first row)", res.Partition)
	}
	if res.Info.Partitions != 3 || res.Info.Method != "mondrian" || res.Info.K != 2 || res.Info.Columns != 5 {
		t.Errorf("info %+v", res.Info)
	}
}

// TestMondrianReleases: releases of random data pass the verifier as
// k-anonymous by suppression, every row is its partition's intersection,
// and the release does not depend on the input row order.
func TestMondrianReleases(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		m := randomMatrix(seed, 400, 30, 6)
		for _, k := range []int{1, 2, 5, 17, 400} {
			res, err := Mondrian(context.Background(), m, MondrianParams{K: k})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := verify.Check(m, res.Release, verify.Params{K: k, Mode: matrix.NonSmooth})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Valid {
				t.Fatalf("seed %d k %d: invalid release: %v", seed, k, rep.Problems)
			}
			members := map[int32][]int{}
			for i, p := range res.Partition {
				members[p] = append(members[p], i)
			}
			if int64(len(members)) != res.Info.Partitions {
				t.Fatalf("seed %d k %d: %d partitions used, info says %d", seed, k, len(members), res.Info.Partitions)
			}
			for p, rows := range members {
				if len(rows) < k {
					t.Fatalf("seed %d k %d: partition %d has %d rows", seed, k, p, len(rows))
				}
				common := slices.Clone(m.Row(rows[0]))
				for _, i := range rows[1:] {
					common = slices.DeleteFunc(common, func(f uint32) bool {
						_, ok := slices.BinarySearch(m.Row(i), f)
						return !ok
					})
				}
				for _, i := range rows {
					if !slices.Equal(res.Release.Row(i), common) {
						t.Fatalf("seed %d k %d: row %d = %v, want the intersection %v", seed, k, i, res.Release.Row(i), common)
					}
				}
			}
			if k == 400 && res.Info.Partitions != 1 {
				t.Errorf("k = rows: %d partitions", res.Info.Partitions)
			}
			// Reversed input, same release per user.
			order := make([]int, m.NumRows())
			for i := range order {
				order[i] = m.NumRows() - 1 - i
			}
			rev, err := Mondrian(context.Background(), m.Permute(order), MondrianParams{K: k})
			if err != nil {
				t.Fatal(err)
			}
			for j, i := range order {
				if !slices.Equal(rev.Release.Row(j), res.Release.Row(i)) {
					t.Fatalf("seed %d k %d: user %s released differently after reversing the input", seed, k, m.Users[i])
				}
			}
		}
	}
}

func TestMondrianErrors(t *testing.T) {
	m := randomMatrix(1, 10, 5, 2)
	if _, err := Mondrian(context.Background(), m, MondrianParams{K: 11}); err == nil || !strings.Contains(err.Error(), "k = 11") {
		t.Errorf("k > rows: %v", err)
	}
	bad := &matrix.Matrix{Users: []string{"x"}, Offsets: []int64{0, 2}, Features: []uint32{3, 1}}
	if _, err := Mondrian(context.Background(), bad, MondrianParams{K: 1}); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("unsorted row: %v", err)
	}
	dup := matrix.New(2, 0)
	dup.Append("x", []uint32{1})
	dup.Append("x", []uint32{2})
	if _, err := Mondrian(context.Background(), dup, MondrianParams{K: 1}); err == nil || err.Error() != "row 1: user id repeats row 0 (merge repeats, e.g. --dedupe=union)" {
		t.Errorf("repeated user: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Mondrian(ctx, m, MondrianParams{K: 1}); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}

// TestMondrianAdult: on adult the balanced cut beats the paper's Mondrian
// figure (59.9% Jaccard at k = 8).
func TestMondrianAdult(t *testing.T) {
	m := datasets.ForTest(t, "adult")
	res, err := Mondrian(context.Background(), m, MondrianParams{K: 8})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verify.Check(m, res.Release, verify.Params{K: 8, Mode: matrix.NonSmooth})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("adult mondrian k=8: jaccard %.4f, %d partitions, %.2fs", rep.Jaccard, res.Info.Partitions, res.Info.Seconds)
	if !rep.Valid || rep.Jaccard < 0.599 {
		t.Errorf("adult: valid %v, jaccard %.4f, want valid and at least 0.599", rep.Valid, rep.Jaccard)
	}
}

func ExampleMondrian() {
	m := matrix.New(4, 0)
	m.Append("ann", []uint32{1, 2})
	m.Append("bob", []uint32{1, 2, 7})
	m.Append("cid", []uint32{3})
	m.Append("dee", []uint32{3, 4})
	res, err := Mondrian(context.Background(), m, MondrianParams{K: 2})
	if err != nil {
		panic(err)
	}
	for i, u := range res.Release.Users {
		fmt.Println(u, res.Release.Row(i))
	}
	// Output:
	// ann [1 2]
	// bob [1 2]
	// cid [3]
	// dee [3]
}

// referenceMondrian is Mondrian straight from its definition: every
// partition is counted from scratch and all its features are compared.
// It returns each row's partition numbered by first row.
func referenceMondrian(m *matrix.Matrix, k int) []int32 {
	n := m.NumRows()
	part := make([]int32, n)
	for i := range part {
		part[i] = -1
	}
	var cut func(rows []int)
	next := int32(0)
	cut = func(rows []int) {
		cnt := map[uint32]int{}
		for _, r := range rows {
			for _, f := range m.Row(r) {
				cnt[f]++
			}
		}
		s := len(rows)
		best, bestD := uint32(0), -1
		for f, c := range cnt {
			if c < k || s-c < k {
				continue
			}
			d := max(2*c-s, s-2*c)
			if bestD < 0 || d < bestD || d == bestD && f < best {
				best, bestD = f, d
			}
		}
		if bestD < 0 {
			for _, r := range rows {
				part[r] = next
			}
			next++
			return
		}
		var in, out []int
		for _, r := range rows {
			if _, ok := slices.BinarySearch(m.Row(r), best); ok {
				in = append(in, r)
			} else {
				out = append(out, r)
			}
		}
		cut(in)
		cut(out)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	cut(all)
	return byFirstRow(part)
}

// byFirstRow renumbers partitions by their first row.
func byFirstRow(part []int32) []int32 {
	renum := map[int32]int32{}
	out := make([]int32, len(part))
	for i, p := range part {
		q, ok := renum[p]
		if !ok {
			q = int32(len(renum))
			renum[p] = q
		}
		out[i] = q
	}
	return out
}

// TestMondrianMatchesReference: the incremental counting finds the same
// partitions as counting every partition afresh, on skewed sparse data
// (long chains of small cuts), dense data (balanced cuts) and ties.
func TestMondrianMatchesReference(t *testing.T) {
	for _, c := range []struct {
		seed         uint64
		n, cols, deg int
	}{
		{1, 500, 400, 3}, {2, 500, 40, 8}, {3, 300, 6, 3}, {4, 1000, 2000, 2}, {5, 64, 12, 6},
	} {
		m := randomMatrix(c.seed, c.n, c.cols, c.deg)
		for _, k := range []int{1, 2, 3, 8, 25} {
			want := referenceMondrian(m, k)
			res, err := Mondrian(context.Background(), m, MondrianParams{K: k})
			if err != nil {
				t.Fatal(err)
			}
			// Users are named in row order, so first user = first row.
			if got := byFirstRow(res.Partition); !slices.Equal(got, want) {
				t.Errorf("seed %d (%d×%d, degree %d) k %d: partitions differ from the reference", c.seed, c.n, c.cols, c.deg, k)
			}
		}
	}
}
