package linkage

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

var (
	benchRows   = flag.Int64("linkage_rows", 100_000, "BenchmarkNightlyLinkage: generated user lists")
	benchNights = flag.Int("linkage_nights", 7, "BenchmarkNightlyLinkage: nights (the table links 2, 3 and this many)")
)

// BenchmarkNightlyLinkage reproduces issue 20's table: user lists drift
// every night (5% of held features dropped, 0.5 new draws per user by
// popularity), each night is solved whole (k = 8, smooth, seed 1), and the
// first 2, 3 and N nights are linked, once with the ids kept and once with
// pseudonyms under a fresh key per night. make bench-linkage runs it.
func BenchmarkNightlyLinkage(b *testing.B) {
	const k = 8
	up := gen.UserListsParams{Rows: *benchRows, Columns: 100_000, MeanDegree: 10, Zipf: 1.1, Seed: 1}
	for range b.N {
		data, err := gen.UserListsMatrix(up)
		if err != nil {
			b.Fatal(err)
		}
		var keep, pseudo []*matrix.Matrix
		var names []string
		for night := 1; night <= *benchNights; night++ {
			if night > 1 {
				if data, err = gen.Drift(data, gen.DriftParams{Columns: up.Columns, Zipf: up.Zipf, DropProb: 0.05, NewPerUser: 0.5, Seed: 1, Night: int64(night)}); err != nil {
					b.Fatal(err)
				}
			}
			key, err := pseudonym.NewKey()
			if err != nil {
				b.Fatal(err)
			}
			pdata, err := pseudonym.Matrix(data, key)
			if err != nil {
				b.Fatal(err)
			}
			kr, kj := solveNight(b, data, k)
			pr, pj := solveNight(b, pdata, k)
			fmt.Printf("night %d: %d rows, %d entries; Jaccard keep %.4f, pseudonym %.4f\n", night, data.NumRows(), data.NumEntries(), kj, pj)
			keep, pseudo = append(keep, kr), append(pseudo, pr)
			names = append(names, fmt.Sprintf("night%d", night))
		}
		fmt.Printf("\n%d user lists, k = %d, smooth, solve; drift 5%% dropped + 0.5 new per user per night\n\n", *benchRows, k)
		fmt.Println("| linked nights | user ids | users whose linked set is < k | < k/2 | pinned to 1 user | classes of the last night matched in the one before | of those, size changed by < k |")
		fmt.Println("|---|---|---:|---:|---:|---:|---:|")
		for _, n := range slices.Compact([]int{2, 3, *benchNights}) {
			for _, c := range []struct {
				ids  string
				rels []*matrix.Matrix
			}{{"keep", keep[:n]}, {"pseudonym", pseudo[:n]}} {
				r, err := Measure(names[:n], c.rels, k)
				if err != nil {
					b.Fatal(err)
				}
				if r.Mode == "users" {
					u := r.Users
					fmt.Printf("| %d | %s | %.1f%% | %.1f%% | %.1f%% | — | — |\n", n, c.ids, 100*u.BelowKFraction, 100*u.BelowHalfKFraction, 100*u.PinnedFraction)
					continue
				}
				l := r.ClassLinks[len(r.ClassLinks)-1]
				fmt.Printf("| %d | %s | ids do not join | — | — | %d of %d (%.1f%%) | %d |\n", n, c.ids, l.Matched, l.ClassesTo,
					100*float64(l.Matched)/float64(l.ClassesTo), l.ChangedBelowK)
			}
		}
	}
}

func solveNight(b *testing.B, m *matrix.Matrix, k int) (*matrix.Matrix, float64) {
	b.Helper()
	res, err := solver.Solve(context.Background(), m, solver.Params{K: k, Mode: matrix.Smooth, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	r, err := verify.Check(m, res.Release, verify.Params{K: k, Mode: matrix.Smooth})
	if err != nil || !r.Valid {
		b.Fatalf("night release invalid: %v %v", err, r.GetProblems())
	}
	return res.Release, r.Jaccard
}
