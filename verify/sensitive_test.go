package verify

import (
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// TestCheckSensitive: hand-made releases that break each sensitive rule
// are refused with a line naming the rule, the valid ones pass, and the
// sensitive entries are counted.
func TestCheckSensitive(t *testing.T) {
	// Users a–d hold 9 (sensitive) but for d; e–h hold 1 and 9.
	in := rows([]uint32{1, 9}, []uint32{1, 9}, []uint32{1, 9}, []uint32{1},
		[]uint32{1, 9}, []uint32{1, 9}, []uint32{1, 9}, []uint32{1, 9})
	same := func(r ...[]uint32) *matrix.Matrix { return rows(r...) }
	abcd := [][]uint32{{1}, {1}, {1}, {1}}
	all9 := [][]uint32{{1, 9}, {1, 9}, {1, 9}, {1, 9}}
	for _, c := range []struct {
		name string
		out  *matrix.Matrix
		p    Params
		want string // "" for a valid release
		fig  *smoothanonpb.SensitiveFigures
	}{
		{"suppressed where d lacks it", same(append(abcd, all9...)...), Params{K: 4, Sensitive: f(9)}, "",
			&smoothanonpb.SensitiveFigures{SensitiveK: 4, Policy: "show", Held: 7, Released: 4, Suppressed: 3}},
		{"created for d", same(append(all9, all9...)...), Params{K: 4, Sensitive: f(9)},
			"feature 9: held originally by 7: a sensitive feature is never created",
			&smoothanonpb.SensitiveFigures{SensitiveK: 4, Policy: "show", Held: 7, Released: 8, Suppressed: 0, Created: 1, Violations: 1}},
		{"created, nonsmooth", same(append(all9, all9...)...), Params{K: 4, Mode: matrix.NonSmooth, Sensitive: f(9)},
			"a sensitive feature is never created", nil},
		{"class below sensitive_k", same(append(abcd, all9...)...), Params{K: 4, SensitiveK: 5, Sensitive: f(9)},
			"smaller than sensitive_k = 5", nil},
		{"shown under drop", same(append(abcd, all9...)...), Params{K: 4, Sensitive: f(9), SensitiveDrop: true},
			"policy drop releases none", nil},
		{"dropped under drop", same(append(abcd, abcd...)...), Params{K: 4, Sensitive: f(9), SensitiveDrop: true}, "",
			&smoothanonpb.SensitiveFigures{SensitiveK: 4, Policy: "drop", Held: 7, Suppressed: 7}},
		{"one class of 8 at sensitive_k 8", same(append(abcd, abcd...)...), Params{K: 4, SensitiveK: 8, Sensitive: f(9)}, "", nil},
		{"a list of other features", same(append(all9, all9...)...), Params{K: 4, Sensitive: f(5)}, "", nil},
	} {
		rep, err := Check(in, c.out, c.p)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(rep.Problems, "\n")
		if c.want == "" && !rep.Valid {
			t.Errorf("%s: refused: %s", c.name, got)
		}
		if c.want != "" && (rep.Valid || !strings.Contains(got, c.want)) {
			t.Errorf("%s: problems %q, want %q", c.name, got, c.want)
		}
		if rep.Sensitive == nil {
			t.Fatalf("%s: no sensitive figures", c.name)
		}
		if c.fig != nil {
			fig := rep.Sensitive
			if fig.SensitiveK != c.fig.SensitiveK || fig.Policy != c.fig.Policy || fig.Held != c.fig.Held || fig.Released != c.fig.Released ||
				fig.Suppressed != c.fig.Suppressed || fig.Created != c.fig.Created || fig.Violations != c.fig.Violations {
				t.Errorf("%s: figures %v, want %v", c.name, fig, c.fig)
			}
		}
	}
	if _, err := Check(in, in, Params{K: 4, SensitiveK: 3, Sensitive: f(9)}); err == nil {
		t.Error("sensitive_k below k accepted")
	}
	if _, err := Check(in, in, Params{K: 4, Sensitive: f(9, 2)}); err == nil {
		t.Error("a descending list accepted")
	}
	rep, err := Check(in, in, Params{K: 1})
	if err != nil || rep.Sensitive != nil {
		t.Errorf("figures without a list: %v %v", rep.Sensitive, err)
	}
}

// TestCheckUnmatchedSensitive: without matching users, a class below
// sensitive_k showing a sensitive feature, one shown under drop, and one
// shown to more users than held it are refused.
func TestCheckUnmatchedSensitive(t *testing.T) {
	in := rows([]uint32{1, 9}, []uint32{1, 9}, []uint32{1, 9}, []uint32{1},
		[]uint32{1, 9}, []uint32{1, 9}, []uint32{1, 9}, []uint32{1, 9})
	four := [][]uint32{{1, 9}, {1, 9}, {1, 9}, {1, 9}}
	plain := [][]uint32{{1}, {1}, {1}, {1}}
	for _, c := range []struct {
		name string
		out  *matrix.Matrix
		p    Params
		want string
	}{
		{"valid", rows(append(plain, four...)...), Params{K: 4, Sensitive: f(9)}, ""},
		{"below sensitive_k", rows(append(plain, four...)...), Params{K: 4, SensitiveK: 5, Sensitive: f(9)}, "smaller than sensitive_k = 5"},
		{"drop", rows(append(plain, four...)...), Params{K: 4, Sensitive: f(9), SensitiveDrop: true}, "policy drop releases none"},
		{"more shown than held", rows(append(four, four...)...), Params{K: 4, Sensitive: f(9)}, "feature 9: the release needs 8 original holders, the input has 7"},
	} {
		rep, err := CheckUnmatched(in, c.out, c.p)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(rep.Problems, "\n")
		if (c.want == "") != rep.Valid || !strings.Contains(got, c.want) || rep.Sensitive.GetHeld() != 7 {
			t.Errorf("%s: valid %v, problems %q, figures %v; want %q", c.name, rep.Valid, got, rep.Sensitive, c.want)
		}
	}
}
