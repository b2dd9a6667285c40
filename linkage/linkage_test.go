package linkage

import (
	"reflect"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// release builds a release from user → released features.
func release(rows ...any) *matrix.Matrix {
	m := matrix.New(0, 0)
	for i := 0; i < len(rows); i += 2 {
		m.Append(rows[i].(string), rows[i+1].([]uint32))
	}
	return m
}

var one, two, five, six = []uint32{1}, []uint32{2}, []uint32{5, 7}, []uint32{6}

// Worked by hand: in R1 a,b,c,d share {1} and e,f share {2}; in R2 a,b,c,g
// share {5,7} and d,e,f share {6}; g is new in R2 and h left after R1.
//
//	a,b,c: {a,b,c,d} ∩ {a,b,c,g} = {a,b,c}  3
//	d:     {a,b,c,d} ∩ {d,e,f}   = {d}      1 (pinned)
//	e,f:   {e,f}     ∩ {d,e,f}   = {e,f}    2
//	g:     only in R2: {a,b,c,g}            4
//	h:     only in R1: {h}                  1 (a class of one in R1: not a valid release, but counted)
func TestUsersByHand(t *testing.T) {
	r1 := release("a", one, "b", one, "c", one, "d", one, "e", two, "f", two, "h", []uint32{9})
	r2 := release("g", five, "a", five, "b", five, "c", five, "d", six, "e", six, "f", six)
	got, err := Users([]*matrix.Matrix{r1, r2}, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := &UserReport{Users: 8, BelowK: 7, BelowHalfK: 2, Pinned: 2,
		BelowKFraction: 7.0 / 8, BelowHalfKFraction: 2.0 / 8, PinnedFraction: 2.0 / 8,
		MinSet: 1, MeanSet: float64(3+3+3+1+2+2+4+1) / 8,
		Histogram: []Bucket{{1, 1, 2}, {2, 2, 2}, {3, 3, 3}, {4, 7, 1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// One release: each user's linked set is its class.
func TestUsersOneRelease(t *testing.T) {
	r := release("a", one, "b", one, "c", two, "d", two, "e", two, "f", []uint32{}, "g", []uint32{})
	got, err := Users([]*matrix.Matrix{r}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.BelowK != 0 || got.MinSet != 2 || !reflect.DeepEqual(got.Histogram, []Bucket{{2, 3, 7}}) {
		t.Errorf("%+v", got)
	}
}

// Identical classes every night: linking learns nothing.
func TestUsersStableClasses(t *testing.T) {
	r := release("a", one, "b", one, "c", one, "d", two, "e", two, "f", two)
	s := release("a", six, "b", six, "c", six, "d", five, "e", five, "f", five)
	got, err := Users([]*matrix.Matrix{r, s, r}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got.BelowK != 0 || got.MinSet != 3 {
		t.Errorf("%+v", got)
	}
}

func TestUsersErrors(t *testing.T) {
	dup := release("a", one, "a", two)
	for _, c := range []struct {
		rel []*matrix.Matrix
		k   int
		err string
	}{
		{nil, 2, "no releases"},
		{[]*matrix.Matrix{dup}, 2, `release 1 names user "a" twice`},
		{[]*matrix.Matrix{dup}, 0, "k = 0"},
		{make([]*matrix.Matrix, 65), 2, "65 releases"},
	} {
		if _, err := Users(c.rel, c.k); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v, want %q", err, c.err)
		}
	}
}

// Class to class, by hand: R1 has {1}×3, {2}×3, {9}×2; R2 (other ids) has
// {1}×4 (grew by 1), {2}×3 (same), {5,7}×2 (new).
func TestClassesByHand(t *testing.T) {
	r1 := release("p1", one, "p2", one, "p3", one, "p4", two, "p5", two, "p6", two, "p7", []uint32{9}, "p8", []uint32{9})
	r2 := release("q1", one, "q2", one, "q3", one, "q4", one, "q5", two, "q6", two, "q7", two, "q8", five, "q9", five)
	got, err := Classes([]*matrix.Matrix{r1, r2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []ClassLink{{From: 1, To: 2, ClassesFrom: 3, ClassesTo: 3, Matched: 2, MatchedUsers: 7,
		SameSize: 1, Grew: 1, ChangedBelowK: 1, MaxChange: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// A shrink by k or more is not "below k".
	r3 := release("s1", two, "s2", two, "s3", two, "s4", two, "s5", two, "s6", two, "s7", two)
	got, _ = Classes([]*matrix.Matrix{r3, r1}, 2)
	if l := got[0]; l.Matched != 1 || l.Shrank != 1 || l.ChangedBelowK != 0 || l.MaxChange != 4 {
		t.Errorf("%+v", l)
	}
	if _, err := Classes([]*matrix.Matrix{r1}, 2); err == nil {
		t.Error("one release linked class to class")
	}
}

// Measure picks users when ids join and classes when they do not.
func TestMeasureMode(t *testing.T) {
	r1 := release("a", one, "b", one, "c", two, "d", two)
	r2 := release("a", one, "c", one, "b", two, "d", two)
	other := release("x", one, "y", one, "z", two, "w", two)
	rep, err := Measure([]string{"n1", "n2"}, []*matrix.Matrix{r1, r2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "users" || !rep.IDsJoin || rep.Users.Pinned != 4 || rep.IDOverlap[0] != 1 || rep.ClassLinks != nil {
		t.Errorf("joined: %+v %+v", rep, rep.Users)
	}
	if rep.Releases[1] != (ReleaseInfo{Name: "n2", Rows: 4, Classes: 2, MinSize: 2}) {
		t.Errorf("release info %+v", rep.Releases[1])
	}
	rep, err = Measure([]string{"n1", "n3"}, []*matrix.Matrix{r1, other}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "classes" || rep.IDsJoin || rep.Users != nil || len(rep.ClassLinks) != 1 || rep.ClassLinks[0].SameSize != 2 ||
		!strings.Contains(rep.Note, "n1 and n3 do not join (0.00% of ids shared") {
		t.Errorf("disjoint: %+v", rep)
	}
}

// TestSharedKeys: every pair with one fingerprint, in order; no
// fingerprint is never shared.
func TestSharedKeys(t *testing.T) {
	got := SharedKeys([]string{"f", "", "g", "f", "", "f", "g"})
	want := []KeyShare{{1, 4, "f"}, {1, 6, "f"}, {3, 7, "g"}, {4, 6, "f"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SharedKeys = %v, want %v", got, want)
	}
	if got := SharedKeys([]string{"", "", "a"}); got != nil {
		t.Errorf("no shared key: %v", got)
	}
	r, err := Measure([]string{"r1", "r2"}, []*matrix.Matrix{release("a", one, "b", one), release("x", one, "y", one)}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckKeys([]string{"f"}); err == nil {
		t.Error("CheckKeys took one fingerprint for two releases")
	}
	if err := r.CheckKeys([]string{"f", "f"}); err != nil || len(r.SharedKeys) != 1 || r.Releases[1].KeyFingerprint != "f" ||
		r.SharedKeys[0].String() != "releases 1 and 2 share a pseudonym key (fingerprint f): their user ids join, so the series is not protected" {
		t.Errorf("CheckKeys: %+v, %v", r, err)
	}
}
