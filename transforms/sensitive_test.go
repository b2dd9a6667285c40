package transforms

import (
	"strings"
	"testing"
)

// TestSensitiveRuleJudge: each way a class can break the sensitive rule
// is counted and named; classes that follow it, and a nil rule, pass.
func TestSensitiveRuleJudge(t *testing.T) {
	rule := &SensitiveRule{Features: []uint32{9, 12}, K: 5}
	for _, c := range []struct {
		name string
		r    *SensitiveRule
		c    ClassAcc
		bad  int64
		want string
	}{
		{"shown by all of 5", rule, ClassAcc{Rows: 5, Out: []uint32{1, 9}, Hits: []int64{3, 5}}, 0, ""},
		{"created", rule, ClassAcc{Rows: 5, Out: []uint32{9, 12}, Hits: []int64{4, 5}}, 1, "never created"},
		{"below sensitive_k", rule, ClassAcc{Rows: 4, Out: []uint32{9, 12}, Hits: []int64{4, 4}}, 2, "smaller than sensitive_k = 5"},
		{"drop", &SensitiveRule{Features: []uint32{9}, Drop: true}, ClassAcc{Rows: 50, Out: []uint32{9}, Hits: []int64{50}}, 1, "policy drop"},
		{"not sensitive", rule, ClassAcc{Rows: 2, Out: []uint32{1}, Hits: []int64{1}}, 0, ""},
		{"no rule", nil, ClassAcc{Rows: 1, Out: []uint32{9}, Hits: []int64{0}}, 0, ""},
	} {
		var st SensitiveStats
		line := c.r.judge(&st, c.c)
		if st.Violations != c.bad || (c.want == "") != (line == "") || !strings.Contains(line, c.want) {
			t.Errorf("%s: %d violations, line %q; want %d and %q", c.name, st.Violations, line, c.bad, c.want)
		}
	}
}

func TestSensitiveRuleCounts(t *testing.T) {
	rule := &SensitiveRule{Features: []uint32{9, 12}, K: 5, Record: "sha256=" + strings.Repeat("ab", 32) + " k=5 policy=show", Listed: 3}
	var st SensitiveStats
	rule.countRow(&st, []uint32{1, 9, 12}, []uint32{1, 9})   // 12 suppressed
	rule.countRow(&st, []uint32{2}, []uint32{2, 12})         // 12 created
	rule.countRow(&st, []uint32{9, 12}, []uint32{9, 12, 30}) // both kept
	var other SensitiveStats
	other.merge(st)
	f := rule.figures(other)
	if f.Held != 4 || f.Released != 4 || f.Suppressed != 1 || f.Created != 1 || f.Features != 3 || f.SensitiveK != 5 ||
		f.Policy != "show" || f.ListSha256 != strings.Repeat("ab", 32) {
		t.Errorf("figures %v", f)
	}
	var none *SensitiveRule
	none.countRow(&st, []uint32{9}, []uint32{9})
	if none.figures(st) != nil || none.check(3) != nil {
		t.Error("a nil rule reports or refuses")
	}
	if err := rule.check(8); err == nil || !strings.Contains(err.Error(), "smaller than k = 8") {
		t.Errorf("sensitive_k below k: %v", err)
	}
	if err := (&SensitiveRule{Features: []uint32{3, 3}, K: 4}).check(4); err == nil {
		t.Error("repeated ids accepted")
	}
}
