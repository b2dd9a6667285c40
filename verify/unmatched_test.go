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

// TestCheckUnmatchedAbsent: users held on no row of a long-form release
// join its rows without features, or are a class of their own, and count
// toward the users the release holds.
func TestCheckUnmatchedAbsent(t *testing.T) {
	in := rows([]uint32{1}, []uint32{1}, []uint32{1, 3}, []uint32{4}, []uint32{4}, []uint32{5})
	for _, c := range []struct {
		name    string
		out     *matrix.Matrix
		absent  int64
		want    string
		classes int64
		min     int64
	}{
		{"own class", rows([]uint32{1}, []uint32{1}, []uint32{1}), 3, "", 2, 3},
		{"joins the empty rows", rows([]uint32{1}, []uint32{1}, []uint32{1}, []uint32{}), 2, "", 2, 3},
		{"own class below k", rows([]uint32{1}, []uint32{1}, []uint32{1}, []uint32{4}, []uint32{4}), 1, "class of 1 users released without features (on no row) is smaller than k = 2", 3, 1},
		{"empty rows and absent below k", rows([]uint32{1}, []uint32{1}, []uint32{1}, []uint32{4}, []uint32{4}, []uint32{}), 0, "class of 1 users (e.g. release row 5)", 3, 1},
		{"too many users", rows([]uint32{1}, []uint32{1}, []uint32{1}), 4, "the release holds 7 users (4 of them on no row), the input 6", 2, 3},
		{"too few users", rows([]uint32{1}, []uint32{1}, []uint32{1}), 2, "the release holds 5 users (2 of them on no row), the input 6", 2, 2},
	} {
		r, err := CheckUnmatched(in, c.out, Params{K: 2, Mode: matrix.Smooth, Absent: c.absent})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := strings.Join(r.Problems, "; ")
		if c.want == "" && !r.Valid || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: valid %v problems %q, want %q", c.name, r.Valid, got, c.want)
		}
		if r.Classes != c.classes || r.MinClass != c.min {
			t.Errorf("%s: %d classes min %d, want %d min %d", c.name, r.Classes, r.MinClass, c.classes, c.min)
		}
	}
	if _, err := CheckUnmatched(in, rows(), Params{K: 2, Absent: -1}); err == nil {
		t.Error("negative absent users taken")
	}
	if _, err := Check(in, in, Params{K: 2, Absent: 1}); err == nil {
		t.Error("Check took absent users it cannot match")
	}
}

// TestFillAbsent: the input's users on no row get an empty row, once each,
// in input order; a release naming every user comes back as is.
func TestFillAbsent(t *testing.T) {
	in := rows([]uint32{1}, []uint32{2}, []uint32{3})
	in.Users[2] = "a" // a repeated input id
	out := matrix.New(0, 0)
	out.Append("b", []uint32{2})
	got, n := FillAbsent(in.Users, out)
	if n != 1 || got.NumRows() != 2 || got.Users[1] != "a" || len(got.Row(1)) != 0 || out.NumRows() != 1 {
		t.Errorf("filled %d: users %v offsets %v (out now %d rows)", n, got.Users, got.Offsets, out.NumRows())
	}
	if same, n := FillAbsent(in.Users, got); n != 0 || same != got {
		t.Errorf("a release naming every user: filled %d", n)
	}
}
