package verify

import (
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

func rows(r ...[]uint32) *matrix.Matrix {
	m := matrix.New(0, 0)
	for i, f := range r {
		m.Append(string(rune('a'+i)), f)
	}
	return m
}

// TestCheckUnmatched: each check that needs no user matching finds its
// problem, and a valid release (under other ids) passes.
func TestCheckUnmatched(t *testing.T) {
	in := rows([]uint32{1, 2}, []uint32{1}, []uint32{1, 3}, []uint32{4}, []uint32{4}, []uint32{5})
	rename := func(m *matrix.Matrix) *matrix.Matrix {
		out := &matrix.Matrix{Users: make([]string, len(m.Users)), Offsets: m.Offsets, Features: m.Features}
		for i, u := range m.Users {
			out.Users[i] = "p" + u
		}
		return out
	}
	good := rename(rows([]uint32{1}, []uint32{1}, []uint32{1}, []uint32{4}, []uint32{4}, []uint32{4}))
	for _, c := range []struct {
		name string
		out  *matrix.Matrix
		mode matrix.Mode
		want string
	}{
		{"valid", good, matrix.Smooth, ""},
		{"nonsmooth needs all holders", good, matrix.NonSmooth, "feature 4: the release needs 3 original holders, the input has 2"},
		{"small class", rename(rows([]uint32{1}, []uint32{1}, []uint32{1}, []uint32{4}, []uint32{4}, []uint32{})), matrix.Smooth, "class of 1 users"},
		{"row count", rename(rows([]uint32{1}, []uint32{1}, []uint32{1}, []uint32{4}, []uint32{4})), matrix.Smooth, "5 rows, the input 6"},
		{"support", rename(rows([]uint32{7}, []uint32{7}, []uint32{7}, []uint32{4}, []uint32{4}, []uint32{4})), matrix.Smooth, "feature 7: the release needs 2 original holders, the input has 0"},
		{"duplicate", &matrix.Matrix{Users: []string{"x", "x", "x", "y", "y", "y"}, Offsets: good.Offsets, Features: good.Features}, matrix.Smooth, `release row 1: user id repeats an earlier row`},
	} {
		r, err := CheckUnmatched(in, c.out, Params{K: 3, Mode: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(r.Problems, "; ")
		if c.want == "" && !r.Valid || c.want != "" && (r.Valid || !strings.Contains(got, c.want)) {
			t.Errorf("%s: valid %v problems %q, want %q", c.name, r.Valid, got, c.want)
		}
		if !r.UsersUnmatched || len(r.Checks) != 4 {
			t.Errorf("%s: unmatched %v checks %v", c.name, r.UsersUnmatched, r.Checks)
		}
	}
}
