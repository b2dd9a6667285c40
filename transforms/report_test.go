package transforms

import (
	"math"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

func TestBuildReport(t *testing.T) {
	ok := Stats{InputRows: 10, Rows: 10, RowsWritten: 10, EntriesIn: 40, EntriesOut: 36, Kept: 30, Created: 6,
		Classes: 2, Chunks: 1}
	ok.ClassSize.Add(4)
	ok.ClassSize.Add(6)
	r := BuildReport(ok, 4, matrix.Smooth, nil)
	if !r.Valid || r.Suppressed != 10 || math.Abs(r.Jaccard-30.0/46) > 1e-12 || r.MinClass != 4 || r.ClassSize.Mean != 5 {
		t.Errorf("valid stats: %+v", r)
	}
	bad := []struct {
		edit func(*Stats)
		mode matrix.Mode
		want string
	}{
		{func(s *Stats) { s.SmallClasses = 1 }, matrix.Smooth, "smaller than k"},
		{func(s *Stats) { s.MajorityViolations = 2 }, matrix.Smooth, "majority"},
		{func(s *Stats) {}, matrix.NonSmooth, "created"},
		{func(s *Stats) { s.RowsWritten = 9 }, matrix.Smooth, "9 rows written"},
		{func(s *Stats) { s.Rows = 9 }, matrix.Smooth, "9 rows released"},
		{func(s *Stats) { s.DuplicateUsers = 1 }, matrix.Smooth, "repeated user"},
		{func(s *Stats) { s.HashCollisions = 1 }, matrix.Smooth, "collide"},
	}
	for _, c := range bad {
		s := ok
		c.edit(&s)
		r := BuildReport(s, 4, c.mode, nil)
		if r.Valid || !strings.Contains(strings.Join(r.Problems, "|"), c.want) {
			t.Errorf("want invalid with %q, got valid=%v %q", c.want, r.Valid, r.Problems)
		}
	}
}
