package verify

import (
	"fmt"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// Checks CheckUnmatched runs, as named in RunReport.checks.
const (
	CheckRowCount       = "row_count: the release has as many rows as the input"
	CheckDuplicateUsers = "duplicate_users: no release id repeats"
	CheckClassSize      = "class_size: every class of identical released rows has at least k users"
	CheckFeatureSupport = "feature_support: per feature, the users a release needs to hold it originally (smooth: half of each class showing it, rounded up; nonsmooth and sensitive features: all of them) are no more than its holders in the input"
	CheckSensitive      = "sensitive: no class smaller than sensitive_k shows a sensitive feature (under policy drop, none does)"
)

// CheckUnmatched checks a release whose user ids cannot be matched to the
// input's (pseudonyms whose key the checker does not have). It runs only
// the checks that need no matching (see the Check* constants, listed in
// the report's checks); per-user majority and created-entry checks, and
// the Jaccard, need the users matched and do not run. The report has
// users_unmatched set. A valid report means no check found a problem,
// not that the release is valid: run Check with the key for that.
func CheckUnmatched(in, out *matrix.Matrix, p Params) (*smoothanonpb.RunReport, error) {
	if err := CheckParams(p); err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	r := &smoothanonpb.RunReport{Mode: p.Mode.String(), K: int32(p.K), Rows: int64(in.NumRows()),
		EntriesIn: in.NumEntries(), EntriesOut: out.NumEntries(), UsersUnmatched: true,
		Checks: []string{CheckRowCount, CheckDuplicateUsers, CheckClassSize, CheckFeatureSupport}}
	sens := len(p.Sensitive) > 0 || p.SensitiveRecord != ""
	var sf *smoothanonpb.SensitiveFigures
	if sens {
		r.Checks = append(r.Checks, CheckSensitive)
		sf = sensitiveFigures(p)
		r.Sensitive = sf
	}
	var pr problems
	if p.Absent < 0 {
		return nil, fmt.Errorf("absent users %d, want >= 0", p.Absent)
	}
	switch users := int64(out.NumRows()) + p.Absent; {
	case users == int64(in.NumRows()):
	case p.Absent > 0:
		pr.add("the release holds %d users (%d of them on no row), the input %d", users, p.Absent, in.NumRows())
	default:
		pr.add("the release has %d rows, the input %d", out.NumRows(), in.NumRows())
	}
	seen := make(map[string]struct{}, out.NumRows())
	for i, u := range out.Users {
		if _, ok := seen[u]; ok {
			r.DuplicateUsers++
			pr.add("release row %d: user id repeats an earlier row", i)
		}
		seen[u] = struct{}{}
	}

	cl := classify(out)
	sizes := make([]int64, len(cl.size))
	absentIn := -1 // the class the absent users join: the rows without features
	for c, s := range cl.size {
		sizes[c] = int64(s)
		if p.Absent > 0 && len(out.Row(int(cl.rep[c]))) == 0 {
			sizes[c] += p.Absent
			absentIn = c
		}
	}
	if p.Absent > 0 && absentIn < 0 {
		sizes = append(sizes, p.Absent) // a class on no row at all
		if p.Absent < int64(p.K) {
			r.SmallClasses++
			pr.add("class of %d users released without features (on no row) is smaller than k = %d", p.Absent, p.K)
		}
	}
	need := map[uint32]int64{} // users that must hold each feature originally
	for c := range cl.size {
		if sizes[c] < int64(p.K) {
			r.SmallClasses++
			pr.add("class of %d users (e.g. release row %d) is smaller than k = %d", sizes[c], cl.rep[c], p.K)
		}
		n := sizes[c]
		if p.Mode == matrix.Smooth {
			n = (n + 1) / 2
		}
		bad, ex := 0, uint32(0)
		for _, f := range out.Row(int(cl.rep[c])) {
			if sens && p.isSensitive(f) {
				need[f] += sizes[c]
				sf.Released += sizes[c]
				if p.SensitiveDrop || sizes[c] < p.sensitiveK() {
					if bad == 0 {
						ex = f
					}
					bad++
				}
				continue
			}
			need[f] += n
		}
		if bad > 0 {
			sf.Violations += int64(bad)
			pr.add("class of %d users (e.g. release row %d) shows %d sensitive features against the rule, e.g. feature %d: %s", sizes[c], cl.rep[c], bad, ex, sensitiveWhy(p))
		}
	}
	r.Classes = int64(len(sizes))
	r.ClassSize = Summarize(sizes)
	r.MinClass = r.ClassSize.Min

	held := map[uint32]int64{}
	for _, f := range in.Features {
		held[f]++
	}
	feats := make([]uint32, 0, len(need))
	for f := range need {
		feats = append(feats, f)
	}
	slices.Sort(feats)
	for f, h := range held {
		if sens && p.isSensitive(f) {
			sf.Held += h // suppressed and created need the users matched
		}
	}
	for _, f := range feats {
		if n := need[f]; n > held[f] {
			r.MajorityViolations++
			pr.add("feature %d: the release needs %d original holders, the input has %d", f, n, held[f])
		}
	}
	r.Problems = pr.list()
	r.Valid = len(r.Problems) == 0
	return r, nil
}
