package solver

import (
	"context"
	"fmt"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

// FuzzSolve: any small input gives a release that verify.Check accepts,
// for both modes and variants, and the same release for a reversed input.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, uint8(2), false, false)
	f.Add([]byte{0, 0, 0, 0, 1, 1, 1, 1}, uint8(1), true, true)
	f.Add([]byte{200, 17, 34, 51, 68, 85, 102, 119, 136, 153, 170, 187}, uint8(3), true, false)
	f.Fuzz(func(t *testing.T, data []byte, k uint8, nonsmooth, paper bool) {
		if len(data) > 400 {
			return
		}
		// Byte pairs (user, feature); every user 0..n-1 gets a row.
		n := 1 + len(data)%23
		rows := make([][]uint32, n)
		for i := 0; i+1 < len(data); i += 2 {
			u := int(data[i]) % n
			rows[u] = append(rows[u], uint32(data[i+1]%37))
		}
		m := matrix.New(n, 0)
		for u, r := range rows {
			m.Append(fmt.Sprintf("u%02d", u), r)
		}
		p := Params{K: 1 + int(k)%n, Seed: int64(len(data)), Restarts: 3}
		if nonsmooth {
			p.Mode = matrix.NonSmooth
		}
		if paper {
			p.Variant = Paper
		}
		res, err := Solve(context.Background(), m, p)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := verify.Check(m, res.Release, verify.Params{K: p.K, Mode: p.Mode})
		if err != nil || !rep.Valid {
			t.Fatalf("invalid release: %v %v", err, rep.GetProblems())
		}
		rev := make([]int, n)
		for i := range rev {
			rev[i] = n - 1 - i
		}
		res2, err := Solve(context.Background(), m.Permute(rev), p)
		if err != nil {
			t.Fatal(err)
		}
		if releaseHash(res.Release) != releaseHash(res2.Release) {
			t.Fatalf("release depends on the row order")
		}
	})
}
