package transforms

import (
	"math"
	"reflect"
	"testing"
)

func TestMergeStatsOrderFree(t *testing.T) {
	a := Stats{Rows: 1, ShardFiles: []ShardFile{{ID: 3}}, Problems: []string{"b"}, DuplicateIDs: []string{"x", "z"}}
	a.ChunkRows.Add(5)
	b := Stats{Rows: 2, ShardFiles: []ShardFile{{ID: 1}}, Problems: []string{"a"}, DuplicateIDs: []string{"y", "x"}}
	b.ChunkRows.Add(7)
	x, y := mergeStats(a, b), mergeStats(b, a)
	if !reflect.DeepEqual(x, y) || x.Rows != 3 || !reflect.DeepEqual(x.ShardFiles, []ShardFile{{ID: 1}, {ID: 3}}) || !reflect.DeepEqual(x.DuplicateIDs, []string{"x", "y", "z"}) || x.ChunkRows.Min != 5 || x.ChunkRows.Max != 7 {
		t.Errorf("mergeStats not symmetric: %+v vs %+v", x, y)
	}
	var many Stats
	for i := 0; i < MaxProblems+5; i++ {
		many.problem(string(rune('a' + i)))
	}
	if len(many.Problems) != MaxProblems || many.MoreProblems != 5 {
		t.Errorf("%d problems kept, %d more", len(many.Problems), many.MoreProblems)
	}
}

func TestDist(t *testing.T) {
	var a, b Dist
	for _, v := range []int64{2, 4} {
		a.Add(v)
	}
	b.Add(6)
	a.Merge(b)
	a.Merge(Dist{})
	p := a.Proto()
	if p.Count != 3 || p.Sum != 12 || p.Min != 2 || p.Max != 6 || p.Mean != 4 || math.Abs(p.Stddev-math.Sqrt(8.0/3)) > 1e-12 {
		t.Errorf("%+v", p)
	}
}
