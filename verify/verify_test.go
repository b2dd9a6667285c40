package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

func TestCheckParams(t *testing.T) {
	tests := []struct {
		p       Params
		wantErr string
	}{
		{Params{K: 1}, ""},
		{Params{K: 10, Mode: matrix.NonSmooth}, ""},
		{Params{K: 0}, "k = 0"},
		{Params{K: -3, Mode: matrix.NonSmooth}, "k = -3"},
		{Params{K: 2, Mode: matrix.Mode(7)}, "mode 7"},
	}
	for _, tc := range tests {
		err := CheckParams(tc.p)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("CheckParams(%+v) = %v, want nil", tc.p, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("CheckParams(%+v) = %v, want error containing %q", tc.p, err, tc.wantErr)
		}
		if _, err := Check(matrix.New(0, 0), matrix.New(0, 0), tc.p); err == nil {
			t.Errorf("Check with %+v: no error", tc.p)
		}
	}
}

type row struct {
	user  string
	feats []uint32
}

func mat(rows ...row) *matrix.Matrix {
	m := matrix.New(0, 0)
	for _, r := range rows {
		m.Append(r.user, r.feats)
	}
	return m
}

func f(ids ...uint32) []uint32 { return ids }

// example is a hand-made input and its smooth 2-anonymous release:
// class {a,b,c} gets {1,2} (3 and 4 held by one of three: dropped; 1 held by
// two of three: added to c), class {d,e} gets {5,6} (6 held by one of two:
// a tie, kept).
func example() (in, out *matrix.Matrix) {
	in = mat(
		row{"a", f(1, 2, 3)},
		row{"b", f(1, 2)},
		row{"c", f(2, 4)},
		row{"d", f(5)},
		row{"e", f(5, 6)},
	)
	out = mat( // any order
		row{"e", f(5, 6)},
		row{"c", f(1, 2)},
		row{"a", f(1, 2)},
		row{"d", f(5, 6)},
		row{"b", f(1, 2)},
	)
	return in, out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestCheckValidSmoothMetrics(t *testing.T) {
	in, out := example()
	r, err := Check(in, out, Params{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Valid || len(r.Problems) != 0 {
		t.Fatalf("valid release rejected: %v", r.Problems)
	}
	want := map[string][2]int64{
		"rows": {r.Rows, 5}, "entries_in": {r.EntriesIn, 10}, "entries_out": {r.EntriesOut, 10},
		"entries_kept": {r.EntriesKept, 8}, "suppressed": {r.Suppressed, 2}, "created": {r.Created, 2},
		"classes": {r.Classes, 2}, "min_class": {r.MinClass, 2}, "small": {r.SmallClasses, 0},
		"majority": {r.MajorityViolations, 0}, "size.count": {r.ClassSize.Count, 2},
		"size.sum": {r.ClassSize.Sum, 5}, "size.max": {r.ClassSize.Max, 3},
	}
	for name, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s = %d, want %d", name, v[0], v[1])
		}
	}
	if !near(r.Jaccard, 8.0/12) || !near(r.SuppressedFraction, 0.2) || !near(r.CreatedFraction, 0.2) {
		t.Errorf("jaccard %v suppressed %v created %v, want 2/3, 0.2, 0.2", r.Jaccard, r.SuppressedFraction, r.CreatedFraction)
	}
	if !near(r.ClassSize.Mean, 2.5) || !near(r.ClassSize.Stddev, 0.5) {
		t.Errorf("class size mean %v stddev %v, want 2.5, 0.5", r.ClassSize.Mean, r.ClassSize.Stddev)
	}
	if r.Mode != "smooth" || r.K != 2 {
		t.Errorf("mode %q k %d", r.Mode, r.K)
	}
	// The same release is not k=3 anonymous and creates entries.
	r3, _ := Check(in, out, Params{K: 3})
	if r3.Valid || r3.SmallClasses != 1 || !strings.Contains(r3.Problems[0], `class of 2 users (e.g. release row 0) is smaller than k = 3`) {
		t.Errorf("k=3: valid %v small %d problems %q", r3.Valid, r3.SmallClasses, r3.Problems)
	}
	rn, _ := Check(in, out, Params{K: 2, Mode: matrix.NonSmooth})
	if rn.Valid || len(rn.Problems) != 2 || !strings.Contains(rn.Problems[0], `release row 1: 1 created entries, e.g. feature 1`) ||
		!strings.Contains(rn.Problems[1], `release row 3: 1 created entries, e.g. feature 6`) {
		t.Errorf("nonsmooth: valid %v problems %q", rn.Valid, rn.Problems)
	}
}

func TestCheckIdentityAndEmpty(t *testing.T) {
	in := mat(row{"x", f(1)}, row{"y", f(1)}, row{"z", nil})
	r, err := Check(in, in, Params{K: 1, Mode: matrix.NonSmooth})
	if err != nil || !r.Valid || r.Jaccard != 1 || r.Classes != 2 || r.MinClass != 1 {
		t.Errorf("identity: %v %+v", err, r)
	}
	r, err = Check(matrix.New(0, 0), matrix.New(0, 0), Params{K: 5})
	if err != nil || !r.Valid || r.Jaccard != 1 || r.Classes != 0 || r.SuppressedFraction != 0 {
		t.Errorf("empty: %v %+v", err, r)
	}
	// Everything suppressed: one class of empty rows.
	empty := mat(row{"x", nil}, row{"y", nil}, row{"z", nil})
	r, _ = Check(in, empty, Params{K: 3, Mode: matrix.NonSmooth})
	if !r.Valid || r.Jaccard != 0 || r.Suppressed != 2 || r.SuppressedFraction != 1 || r.Classes != 1 {
		t.Errorf("all suppressed: %+v", r)
	}
}

func TestCheckViolations(t *testing.T) {
	in, out := example()
	tests := []struct {
		name  string
		in    *matrix.Matrix
		out   *matrix.Matrix
		p     Params
		count func(r reportCounts) int64
		want  []string
	}{
		{"missing user", in, mat(row{"a", f(1, 2)}, row{"b", f(1, 2)}, row{"c", f(1, 2)}, row{"d", f(5)}),
			Params{K: 1}, func(r reportCounts) int64 { return r.missing },
			[]string{`input row 4: user missing from the release`}},
		{"extra user", in, mat(append(rowsOf(out), row{"zz", f(1, 2)})...),
			Params{K: 2}, func(r reportCounts) int64 { return r.extra },
			[]string{`release row 5: user not in the input`}},
		{"duplicate output user", in, mat(append(rowsOf(out), row{"a", f(1, 2)})...),
			Params{K: 2}, func(r reportCounts) int64 { return r.dup },
			[]string{`release rows 2 and 5: one user id`}},
		{"duplicate input user", mat(append(rowsOf(in), row{"b", f(7)})...), out,
			Params{K: 2}, func(r reportCounts) int64 { return r.dup },
			[]string{`input rows 1 and 5: one user id`}},
		{"small class", in, mat(row{"a", f(1, 2)}, row{"b", f(1, 2)}, row{"c", f(2)}, row{"d", f(5, 6)}, row{"e", f(5, 6)}),
			Params{K: 2}, func(r reportCounts) int64 { return r.small },
			[]string{`class of 1 users (e.g. release row 2) is smaller than k = 2`}},
		{"majority", in, mat(row{"a", f(1, 2, 3)}, row{"b", f(1, 2, 3)}, row{"c", f(1, 2, 3)}, row{"d", f(4, 5, 6)}, row{"e", f(4, 5, 6)}),
			Params{K: 2}, func(r reportCounts) int64 { return r.majority },
			[]string{`class of 3 users (e.g. release row 0): 1 features held originally by fewer than half of them, e.g. feature 3 (held by 1)`,
				`class of 2 users (e.g. release row 3): 1 features held originally by fewer than half of them, e.g. feature 4 (held by 0)`}},
		{"nonsmooth created", in, mat(row{"a", f(2)}, row{"b", f(2)}, row{"c", f(2)}, row{"d", f(5, 7)}, row{"e", f(5, 7)}),
			Params{K: 2, Mode: matrix.NonSmooth}, func(r reportCounts) int64 { return r.created },
			[]string{`release row 3: 1 created entries, e.g. feature 7`, `release row 4: 1 created entries, e.g. feature 7`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Check(tc.in, tc.out, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Valid {
				t.Fatalf("invalid release accepted: %+v", r)
			}
			if len(r.Problems) != len(tc.want) {
				t.Fatalf("problems %q, want %q", r.Problems, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(r.Problems[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, r.Problems[i], w)
				}
			}
			c := reportCounts{r.MissingUsers, r.ExtraUsers, r.DuplicateUsers, r.SmallClasses, r.MajorityViolations, r.Created}
			if got := tc.count(c); got != int64(len(tc.want)) {
				t.Errorf("counter = %d, want %d (%+v)", got, len(tc.want), c)
			}
		})
	}
}

type reportCounts struct{ missing, extra, dup, small, majority, created int64 }

func rowsOf(m *matrix.Matrix) []row {
	var rs []row
	for i, u := range m.Users {
		rs = append(rs, row{u, slices.Clone(m.Row(i))})
	}
	return rs
}

func TestProblemsCapped(t *testing.T) {
	in := matrix.New(0, 0)
	for i := 0; i < 30; i++ {
		in.Append(fmt.Sprintf("u%02d", i), nil)
	}
	r, _ := Check(in, matrix.New(0, 0), Params{K: 1})
	if r.MissingUsers != 30 || len(r.Problems) != MaxProblems+1 || r.Problems[MaxProblems] != "... and 10 more problems" {
		t.Errorf("missing %d, %d problems, last %q", r.MissingUsers, len(r.Problems), r.Problems[len(r.Problems)-1])
	}
}

func TestMalformedMatrix(t *testing.T) {
	bad := &matrix.Matrix{Users: []string{"a"}, Offsets: []int64{0, 2}, Features: []uint32{2, 1}}
	if _, err := Check(bad, bad, Params{K: 1}); err == nil || !strings.Contains(err.Error(), "input") {
		t.Errorf("unsorted input row: err %v", err)
	}
}

// With every row hashing alike, classes must still be told apart by content.
func TestHashCollisions(t *testing.T) {
	defer func(h func([]uint32) [2]uint64) { rowHash = h }(rowHash)
	rowHash = func([]uint32) [2]uint64 { return [2]uint64{1, 2} }
	in, out := example()
	r, err := Check(in, out, Params{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Valid || r.Classes != 2 || r.ClassSize.Max != 3 {
		t.Errorf("with colliding hashes: valid %v classes %d problems %q", r.Valid, r.Classes, r.Problems)
	}
	m := mat(row{"a", f(1)}, row{"b", f(2)}, row{"c", f(1)}, row{"d", nil}, row{"e", f(2)}, row{"f", f(3)})
	cl := classify(m)
	if !slices.Equal(cl.class, []int32{0, 1, 0, 2, 1, 3}) || !slices.Equal(cl.size, []int32{2, 2, 1, 1}) {
		t.Errorf("classify = %+v", cl)
	}
}

func TestRowHash(t *testing.T) {
	// Golden values: the hash must stay stable for distributed verification.
	golden := []struct {
		feats []uint32
		want  [2]uint64
	}{
		{nil, [2]uint64{0x49a77309c48265d6, 0xe63f890d4578e660}},
		{[]uint32{1, 2, 3}, [2]uint64{0x824a140506619f8a, 0x6ae12c71a3f4b091}},
		{[]uint32{0}, [2]uint64{0x182671cca7c31eb4, 0x871cd12c093b66b6}},
	}
	for _, g := range golden {
		if got := RowHash(g.feats); got != g.want {
			t.Errorf("RowHash(%v) = %#x, want %#x", g.feats, got, g.want)
		}
	}
	if RowHash(nil) != RowHash([]uint32{}) {
		t.Error("nil and empty lists hash differently")
	}
	seen := make(map[[2]uint64][]uint32)
	// All subsets of {0..11} plus shifted variants hash differently.
	for mask := 0; mask < 1<<12; mask++ {
		for _, shift := range []uint32{0, 1 << 31} {
			var s []uint32
			for b := 0; b < 12; b++ {
				if mask&(1<<b) != 0 {
					s = append(s, uint32(b)+shift)
				}
			}
			if shift != 0 && len(s) == 0 {
				continue
			}
			h := RowHash(s)
			if prev, ok := seen[h]; ok {
				t.Fatalf("RowHash(%v) == RowHash(%v)", s, prev)
			}
			seen[h] = s
		}
	}
	if RowHash([]uint32{0}) == RowHash(nil) || RowHash([]uint32{0, 0}) == RowHash([]uint32{0}) {
		t.Error("zero features collide with shorter lists")
	}
}

func TestCountCommonAndSummarize(t *testing.T) {
	if n := CountCommon(f(1, 3, 5, 7), f(0, 3, 4, 7, 9)); n != 2 {
		t.Errorf("CountCommon = %d, want 2", n)
	}
	if n := CountCommon(nil, f(1)); n != 0 {
		t.Errorf("CountCommon(nil) = %d", n)
	}
	d := Summarize([]int64{2, 4, 4, 4, 5, 5, 7, 9})
	if d.Count != 8 || d.Sum != 40 || d.Min != 2 || d.Max != 9 || d.Mean != 5 || d.Stddev != 2 {
		t.Errorf("Summarize = %+v", d)
	}
	if d := Summarize(nil); d.Count != 0 || d.Mean != 0 {
		t.Errorf("Summarize(nil) = %+v", d)
	}
}

// TestRandomReleases checks Check against a brute-force reference on random
// releases built by the majority rule from random clusters.
func TestRandomReleases(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(30)
		in := matrix.New(0, 0)
		for i := 0; i < n; i++ {
			var fs []uint32
			for j := 0; j < rng.IntN(6); j++ {
				fs = append(fs, uint32(rng.IntN(8)))
			}
			in.Append(fmt.Sprintf("u%d", i), fs)
		}
		k := 1 + rng.IntN(4)
		cluster := make([]int, n)
		for i := range cluster {
			cluster[i] = rng.IntN(1 + n/3)
		}
		out := majorityRelease(in, cluster)
		sortedIn, sortedOut := in.SortedByUser(), out.SortedByUser()
		out = out.Permute(rng.Perm(n))
		for _, mode := range []matrix.Mode{matrix.Smooth, matrix.NonSmooth} {
			rs, err := Check(sortedIn, sortedOut, Params{K: k, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Check(in, out, Params{K: k, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			ref := bruteForce(in, out, k, mode)
			got := refResult{r.Valid, r.EntriesKept, r.Classes, r.SmallClasses, r.MajorityViolations, r.MissingUsers, r.ExtraUsers, r.DuplicateUsers}
			if got != ref {
				t.Fatalf("trial %d mode %v: got %+v, want %+v", trial, mode, got, ref)
			}
			if rs.Valid != r.Valid || rs.EntriesKept != r.EntriesKept || rs.Classes != r.Classes || rs.MajorityViolations != r.MajorityViolations {
				t.Fatalf("trial %d mode %v: sorted rows give %+v, shuffled %+v", trial, mode, rs, r)
			}
		}
	}
}

// TestMatchersAgree checks the merge matcher (both user lists sorted)
// against the hash-index matcher.
func TestMatchersAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 300; trial++ {
		pick := func() []string {
			var s []string
			for i := 0; i < 12; i++ {
				if rng.IntN(3) > 0 {
					s = append(s, fmt.Sprintf("u%02d", i))
				}
			}
			return s
		}
		in, out := pick(), pick()
		var r1, r2 smoothanonpb.RunReport
		var p1, p2 problems
		m1 := matchSorted(in, out, &r1, &p1)
		m2 := matchIndexed(in, out, &r2, &p2)
		if !slices.Equal(m1, m2) || r1.MissingUsers != r2.MissingUsers || r1.ExtraUsers != r2.ExtraUsers ||
			!slices.Equal(p1.list(), p2.list()) {
			t.Fatalf("in %v out %v: sorted %v %q, indexed %v %q", in, out, m1, p1.list(), m2, p2.list())
		}
	}
}

// majorityRelease gives each cluster the features held by at least half of it.
func majorityRelease(in *matrix.Matrix, cluster []int) *matrix.Matrix {
	count := map[int]map[uint32]int{}
	size := map[int]int{}
	for i := range in.Users {
		c := cluster[i]
		size[c]++
		if count[c] == nil {
			count[c] = map[uint32]int{}
		}
		for _, x := range in.Row(i) {
			count[c][x]++
		}
	}
	out := matrix.New(0, 0)
	for i, u := range in.Users {
		c := cluster[i]
		var fs []uint32
		for x, n := range count[c] {
			if 2*n >= size[c] {
				fs = append(fs, x)
			}
		}
		out.Append(u, fs)
	}
	return out
}

type refResult struct {
	valid                          bool
	kept, classes, small, majority int64
	missing, extra, dup            int64
}

// bruteForce is a slow, obvious reference for Check on inputs whose user
// ids are unique. A repeated output user counts only at its first row.
func bruteForce(in, out *matrix.Matrix, k int, mode matrix.Mode) refResult {
	var ref refResult
	inRow := map[string][]uint32{}
	for i, u := range in.Users {
		inRow[u] = in.Row(i)
	}
	first := map[string]bool{} // output row i is the first of its user
	isFirst := make([]bool, out.NumRows())
	for i, u := range out.Users {
		if first[u] {
			ref.dup++
			continue
		}
		first[u] = true
		isFirst[i] = true
		if _, ok := inRow[u]; !ok {
			ref.extra++
		}
	}
	for _, u := range in.Users {
		if !first[u] {
			ref.missing++
		}
	}
	held := func(i int, x uint32) bool {
		fs, ok := inRow[out.Users[i]]
		return isFirst[i] && ok && slices.Contains(fs, x)
	}
	key := func(fs []uint32) string { return fmt.Sprint(fs) }
	members := map[string][]int{}
	var order []string
	for i := range out.Users {
		kk := key(out.Row(i))
		if members[kk] == nil {
			order = append(order, kk)
		}
		members[kk] = append(members[kk], i)
	}
	ref.classes = int64(len(order))
	created := false
	for i := range out.Users {
		for _, x := range out.Row(i) {
			if held(i, x) {
				ref.kept++
			} else if isFirst[i] {
				created = true
			}
		}
	}
	for _, kk := range order {
		ms := members[kk]
		if len(ms) < k {
			ref.small++
		}
		for _, x := range out.Row(ms[0]) {
			n := 0
			for _, i := range ms {
				if held(i, x) {
					n++
				}
			}
			if mode == matrix.Smooth && 2*n < len(ms) {
				ref.majority++
			}
		}
	}
	ref.valid = ref.small == 0 && ref.majority == 0 && !(mode == matrix.NonSmooth && created) &&
		ref.missing == 0 && ref.extra == 0 && ref.dup == 0
	return ref
}

// FuzzCheck compares Check with bruteForce on small matrices decoded from
// the fuzz input: up to 8 input users u0..u7, output rows naming u0..u9 (so
// users may be missing, extra or repeated), features 0..5.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{3, 2, 0, 1, 2, 1, 3, 3, 0, 1, 0, 2, 1, 2}, uint8(2), false)
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1, 0}, uint8(1), true)
	f.Fuzz(func(t *testing.T, data []byte, k uint8, nonsmooth bool) {
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		in := matrix.New(0, 0)
		for i := 0; i < int(next()%9); i++ {
			mask := next()
			var fs []uint32
			for b := 0; b < 6; b++ {
				if mask&(1<<b) != 0 {
					fs = append(fs, uint32(b))
				}
			}
			in.Append(fmt.Sprintf("u%d", i), fs)
		}
		out := matrix.New(0, 0)
		for len(data) >= 2 {
			u, mask := next(), next()
			var fs []uint32
			for b := 0; b < 6; b++ {
				if mask&(1<<b) != 0 {
					fs = append(fs, uint32(b))
				}
			}
			out.Append(fmt.Sprintf("u%d", u%10), fs)
		}
		p := Params{K: 1 + int(k%5)}
		if nonsmooth {
			p.Mode = matrix.NonSmooth
		}
		r, err := Check(in, out, p)
		if err != nil {
			t.Fatal(err)
		}
		ref := bruteForce(in, out, p.K, p.Mode)
		got := refResult{r.Valid, r.EntriesKept, r.Classes, r.SmallClasses, r.MajorityViolations, r.MissingUsers, r.ExtraUsers, r.DuplicateUsers}
		if got != ref {
			t.Fatalf("in %v out %v %+v: got %+v, want %+v", in, out, p, got, ref)
		}
		if r.Valid != (len(r.Problems) == 0) || r.Suppressed+r.EntriesKept != r.EntriesIn || r.Created+r.EntriesKept != r.EntriesOut {
			t.Fatalf("inconsistent report %+v", r)
		}
		if r.Jaccard < 0 || r.Jaccard > 1 || (r.Jaccard == 1) != (r.Suppressed == 0 && r.Created == 0) {
			t.Fatalf("jaccard %v with suppressed %d created %d", r.Jaccard, r.Suppressed, r.Created)
		}
	})
}

// TestMeasure: Measure reports the same metrics as Check but judges no
// anonymity notion, only the users.
func TestMeasure(t *testing.T) {
	in, _ := example()
	// A release with small classes and created entries.
	out := mat(row{"a", f(1, 9)}, row{"b", f(2)}, row{"c", f(1, 2)}, row{"d", f(5)}, row{"e", f(6, 7)})
	m, err := Measure(in, out)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Check(in, out, Params{K: 1, Mode: matrix.NonSmooth})
	if err != nil {
		t.Fatal(err)
	}
	if c.Valid {
		t.Fatal("Check accepted created entries in nonsmooth mode; the example no longer tells Measure apart")
	}
	if !m.Valid || len(m.Problems) != 0 || m.Mode != "" || m.K != 0 {
		t.Errorf("Measure judged the release: valid %v, problems %q, mode %q, k %d", m.Valid, m.Problems, m.Mode, m.K)
	}
	if m.Jaccard != c.Jaccard || m.Created != c.Created || m.Suppressed != c.Suppressed || m.Classes != c.Classes {
		t.Errorf("Measure metrics %+v differ from Check's %+v", m, c)
	}
	m, err = Measure(in, mat(row{"a", f(1)}))
	if err != nil {
		t.Fatal(err)
	}
	if m.Valid || m.MissingUsers != 4 {
		t.Errorf("Measure with missing users: valid %v, missing %d", m.Valid, m.MissingUsers)
	}
}
