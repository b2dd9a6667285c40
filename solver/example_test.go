package solver_test

import (
	"context"
	"fmt"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// Solve clusters six users by the features they hold and releases each
// cluster, of at least k users, as its centre: in smooth mode, the
// features held by at least half of the cluster. Users who share most of
// their features end up together; a feature few of them hold is
// suppressed, one most of them hold may be created for the others.
func ExampleSolve() {
	m := matrix.New(6, 0)
	m.Append("ana", []uint32{1, 2, 3})
	m.Append("ben", []uint32{1, 2})
	m.Append("cem", []uint32{1, 2, 3, 4})
	m.Append("dee", []uint32{7, 8})
	m.Append("eli", []uint32{7, 8, 9})
	m.Append("fay", []uint32{8, 9})

	res, err := solver.Solve(context.Background(), m, solver.Params{K: 2, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Result.Cluster numbers the clusters by their first user in id order.
	for c := range res.Info.GetClusters() {
		var users []string
		var released []uint32
		for i, cluster := range res.Cluster {
			if int64(cluster) == c {
				users = append(users, m.Users[i])
				released = res.Release.Row(i)
			}
		}
		fmt.Printf("class %d: %v released as %v\n", c, users, released)
	}
	// verify.Check judges a release independently of the solver.
	rep, err := verify.Check(m, res.Release, verify.Params{K: 2, Mode: matrix.Smooth})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("valid=%v suppressed=%d created=%d\n", rep.Valid, rep.Suppressed, rep.Created)
	// Output:
	// class 0: [ana ben cem] released as [1 2 3]
	// class 1: [dee eli fay] released as [7 8 9]
	// valid=true suppressed=1 created=3
}
