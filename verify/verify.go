// Package verify checks a release against its input and measures its
// utility, from the two matrices alone.
//
// A release is valid for (k, mode) when it names exactly the input's users,
// each once, and its equivalence classes — the groups of users whose output
// rows are identical — all hold at least k users. In smooth mode every
// feature of a class must have been held originally (in the input) by at
// least half of the class's users (count*2 >= size; a tie is fine). In
// nonsmooth mode (k-anonymity by suppression) the release may create no
// entry: every output entry must be in the input.
//
// Check trusts no cluster ids from the anonymizer: it recomputes the classes
// by grouping output rows on RowHash and confirming equality.
package verify

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// Params say what a release must satisfy.
type Params struct {
	// K is the smallest allowed class size. Required; at least 1.
	K int
	// Mode is the anonymity notion. Optional; default Smooth.
	Mode matrix.Mode
	// Absent is, for CheckUnmatched, the users the release holds on no
	// row: a long-form release's users released without features (its
	// manifest's users less its rows' users). They count as rows without
	// features. Optional; default 0. Check takes none: give it the
	// release with those users' empty rows (FillAbsent).
	Absent int64
	// Sensitive lists the feature ids under the sensitive rule: a class
	// may show one only if every member held it and the class has at
	// least SensitiveK members, whatever the mode; none under
	// SensitiveDrop. Optional; default none; ascending, without repeats.
	Sensitive []uint32
	// SensitiveK is the least size of a class that shows a sensitive
	// feature. Optional; default 0, meaning K; at least K.
	SensitiveK int
	// SensitiveDrop forbids sensitive features in the release. Optional;
	// default false.
	SensitiveDrop bool
	// SensitiveRecord is the list's sensitive.Record (hash, least size,
	// policy): set, the report has its sensitive figures even where the
	// list names no feature of the input. Optional; default "".
	SensitiveRecord string
	// SensitiveListed is the number of entries of the list (ids or names,
	// some perhaps held by no one), for the report. Optional; default 0.
	SensitiveListed int64
}

// sensitiveK is the least size of a class that may show a sensitive
// feature (MaxInt64 where none may).
func (p Params) sensitiveK() int64 {
	if p.SensitiveDrop {
		return math.MaxInt64
	}
	return int64(max(p.K, p.SensitiveK))
}

func (p Params) isSensitive(f uint32) bool {
	_, ok := slices.BinarySearch(p.Sensitive, f)
	return ok
}

// CheckParams reports the first bad parameter.
func CheckParams(p Params) error {
	if p.K < 1 {
		return fmt.Errorf("k = %d, must be at least 1", p.K)
	}
	if p.Mode != matrix.Smooth && p.Mode != matrix.NonSmooth {
		return fmt.Errorf("invalid mode %d (want Smooth or NonSmooth)", int(p.Mode))
	}
	if int64(p.K) > 1<<31-1 {
		return fmt.Errorf("k = %d is too large", p.K)
	}
	if p.SensitiveK != 0 && p.SensitiveK < p.K {
		return fmt.Errorf("sensitive_k = %d is smaller than k = %d", p.SensitiveK, p.K)
	}
	for i := 1; i < len(p.Sensitive); i++ {
		if p.Sensitive[i] <= p.Sensitive[i-1] {
			return fmt.Errorf("sensitive feature %d at index %d: the list must ascend without repeats", p.Sensitive[i], i)
		}
	}
	return nil
}

// MaxProblems is the number of problem lines a report lists; further
// problems are summarised in one last line "... and N more problems".
const MaxProblems = 20

type problems struct {
	lines []string
	more  int
}

func (p *problems) add(format string, args ...any) {
	if len(p.lines) < MaxProblems {
		p.lines = append(p.lines, fmt.Sprintf(format, args...))
		return
	}
	p.more++
}

func (p *problems) list() []string {
	if p.more > 0 {
		return append(p.lines, fmt.Sprintf("... and %d more problems", p.more))
	}
	return p.lines
}

// Check verifies the release out against its input in and measures its
// utility. Rows are matched by user id, in any order. It returns a complete
// report whose Valid and Problems give the verdict; the error is only for bad
// params or a malformed matrix (rows not sorted and repeat-free).
//
// Metrics: Rows is the number of input rows; EntriesKept = |E ∩ E'|,
// Suppressed = |E \ E'|, Created = |E' \ E| with E, E' the sets of (user,
// feature) pairs; Jaccard = |E ∩ E'| / |E ∪ E'| (1 when both are empty);
// the fractions are over EntriesIn (0 when it is 0). Classes are counted
// over all output rows. A repeated user counts only at its first row: later
// input rows of it count as suppressed, later output rows as created.
func Check(in, out *matrix.Matrix, p Params) (*smoothanonpb.RunReport, error) {
	if err := CheckParams(p); err != nil {
		return nil, err
	}
	if p.Absent != 0 {
		return nil, fmt.Errorf("absent users %d given to Check: fill their rows in (FillAbsent)", p.Absent)
	}
	return check(in, out, p, true)
}

// Measure is Check without an anonymity notion, for releases that claim
// none (such as randomized response): the report has the same metrics and
// classes, Mode "" and K 0, and its Valid and Problems only say whether
// the release names exactly the input's users, each once.
func Measure(in, out *matrix.Matrix) (*smoothanonpb.RunReport, error) {
	return check(in, out, Params{K: 1, Mode: matrix.Smooth}, false)
}

// check is Check; judge false skips the class size and mode checks (and
// leaves Mode and K empty).
func check(in, out *matrix.Matrix, p Params, judge bool) (*smoothanonpb.RunReport, error) {
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	r := &smoothanonpb.RunReport{
		Rows:       int64(in.NumRows()),
		EntriesIn:  in.NumEntries(),
		EntriesOut: out.NumEntries(),
	}
	if judge {
		r.Mode, r.K = p.Mode.String(), int32(p.K)
	}
	var pr problems

	if in.NumRows() > 1<<31-1 || out.NumRows() > 1<<31-1 {
		return nil, errors.New("more than 2^31-1 rows")
	}
	var match []int32
	if strictlySorted(in.Users) && strictlySorted(out.Users) {
		match = matchSorted(in.Users, out.Users, r, &pr)
	} else {
		match = matchIndexed(in.Users, out.Users, r, &pr)
	}

	// Equivalence classes of identical output rows.
	cl := classify(out)
	nc := len(cl.size)
	r.Classes = int64(nc)
	sizes := make([]int64, nc)
	for c, s := range cl.size {
		sizes[c] = int64(s)
	}
	r.ClassSize = Summarize(sizes)
	r.MinClass = r.ClassSize.Min
	for c, s := range cl.size {
		if judge && int(s) < p.K {
			r.SmallClasses++
			pr.add("class of %d users (e.g. release row %d) is smaller than k = %d", s, cl.rep[c], p.K)
		}
	}

	// One merge per matched row gives |E ∩ E'| and, per class feature, how
	// many of the class held it originally.
	var counts []int32
	var classOff []int64
	sens := judge && (len(p.Sensitive) > 0 || p.SensitiveRecord != "")
	var sf *smoothanonpb.SensitiveFigures
	if sens {
		sf = sensitiveFigures(p)
		r.Sensitive = sf
	}
	if judge && (p.Mode == matrix.Smooth || sens) {
		classOff = make([]int64, nc+1)
		for c := 0; c < nc; c++ {
			classOff[c+1] = classOff[c] + int64(len(out.Row(int(cl.rep[c]))))
		}
		counts = make([]int32, classOff[nc])
	}
	for i := range out.Users {
		j := match[i]
		if j < 0 {
			continue // extra or repeated user, already a problem
		}
		o, a := out.Row(i), in.Row(int(j))
		var cnt []int32
		if counts != nil {
			c := cl.class[i]
			cnt = counts[classOff[c]:classOff[c+1]]
		}
		common, firstNew := 0, -1
		x, y := 0, 0
		for x < len(o) && y < len(a) {
			switch {
			case o[x] < a[y]:
				if firstNew < 0 {
					firstNew = x
				}
				x++
			case o[x] > a[y]:
				y++
			default:
				common++
				if cnt != nil {
					cnt[x]++
				}
				x++
				y++
			}
		}
		if sens {
			countSensitive(sf, a, o, p)
		}
		if firstNew < 0 && x < len(o) {
			firstNew = x
		}
		r.EntriesKept += int64(common)
		if judge && p.Mode == matrix.NonSmooth && common < len(o) {
			pr.add("release row %d: %d created entries, e.g. feature %d; nonsmooth allows none", i, len(o)-common, o[firstNew])
		}
	}
	r.Suppressed = r.EntriesIn - r.EntriesKept
	r.Created = r.EntriesOut - r.EntriesKept
	if sens {
		for c := 0; c < nc; c++ {
			checkSensitiveClass(sf, &pr, cl.size[c], cl.rep[c], out.Row(int(cl.rep[c])), counts[classOff[c]:classOff[c+1]], p)
		}
	}

	if judge && p.Mode == matrix.Smooth {
		for c := 0; c < nc; c++ {
			size := cl.size[c]
			row := out.Row(int(cl.rep[c]))
			bad, ex := 0, -1
			for x, n := range counts[classOff[c]:classOff[c+1]] {
				if int64(n)*2 < int64(size) {
					bad++
					if ex < 0 {
						ex = x
					}
				}
			}
			if bad > 0 {
				r.MajorityViolations += int64(bad)
				n := counts[classOff[c]+int64(ex)]
				pr.add("class of %d users (e.g. release row %d): %d features held originally by fewer than half of them, e.g. feature %d (held by %d)",
					size, cl.rep[c], bad, row[ex], n)
			}
		}
	}

	union := r.EntriesIn + r.EntriesOut - r.EntriesKept
	if union == 0 {
		r.Jaccard = 1
	} else {
		r.Jaccard = float64(r.EntriesKept) / float64(union)
	}
	if r.EntriesIn > 0 {
		r.SuppressedFraction = float64(r.Suppressed) / float64(r.EntriesIn)
		r.CreatedFraction = float64(r.Created) / float64(r.EntriesIn)
	}
	r.Problems = pr.list()
	r.Valid = len(r.Problems) == 0
	return r, nil
}

func strictlySorted(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

// matchSorted matches output rows to input rows by merging two strictly
// sorted user lists (no repeats possible): match[i] is the input row of
// output row i, or -1.
func matchSorted(in, out []string, r *smoothanonpb.RunReport, pr *problems) []int32 {
	match := make([]int32, len(out))
	var missing []int
	i, j := 0, 0
	for i < len(out) || j < len(in) {
		switch {
		case j == len(in) || (i < len(out) && out[i] < in[j]):
			match[i] = -1
			r.ExtraUsers++
			pr.add("release row %d: user not in the input", i)
			i++
		case i == len(out) || in[j] < out[i]:
			missing = append(missing, j)
			j++
		default:
			match[i] = int32(j)
			i++
			j++
		}
	}
	for _, j := range missing {
		r.MissingUsers++
		pr.add("input row %d: user missing from the release", j)
	}
	return match
}

// matchIndexed matches output rows to input rows through a hash index of
// the input users. A repeated user is matched at its first row only.
func matchIndexed(in, out []string, r *smoothanonpb.RunReport, pr *problems) []int32 {
	index := make(map[string]int32, len(in))
	firstOut := make([]int32, len(in)) // first output row of each input row; -1 none, -2 repeated input row
	for i, u := range in {
		firstOut[i] = -1
		if j, ok := index[u]; ok {
			r.DuplicateUsers++
			pr.add("input rows %d and %d: one user id", j, i)
			firstOut[i] = -2
			continue
		}
		index[u] = int32(i)
	}
	match := make([]int32, len(out))
	var extraSeen map[string]int32
	for i, u := range out {
		match[i] = -1
		j, ok := index[u]
		if !ok {
			if extraSeen == nil {
				extraSeen = make(map[string]int32)
			}
			if f, dup := extraSeen[u]; dup {
				r.DuplicateUsers++
				pr.add("release rows %d and %d: one user id", f, i)
				continue
			}
			extraSeen[u] = int32(i)
			r.ExtraUsers++
			pr.add("release row %d: user not in the input", i)
			continue
		}
		if f := firstOut[j]; f >= 0 {
			r.DuplicateUsers++
			pr.add("release rows %d and %d: one user id", f, i)
			continue
		}
		firstOut[j] = int32(i)
		match[i] = j
	}
	for j := range in {
		if firstOut[j] == -1 {
			r.MissingUsers++
			pr.add("input row %d: user missing from the release", j)
		}
	}
	return match
}

// rowHash is RowHash; tests replace it to exercise collisions.
var rowHash = RowHash

// classes are the equivalence classes of identical rows of a matrix.
type classes struct {
	class []int32 // class of each row
	rep   []int32 // first row of each class
	size  []int32
}

// classify groups identical rows by RowHash in an open-addressing table,
// confirming equality so that a hash collision cannot merge different rows.
// Classes are numbered in order of their first row.
func classify(m *matrix.Matrix) classes {
	n := m.NumRows()
	cl := classes{class: make([]int32, n)}
	size := 16
	for size < 2*n {
		size <<= 1
	}
	slots := make([]int32, size) // class+1; 0 is empty
	mask := uint64(size - 1)
	var hashes [][2]uint64 // of each class
	for i := 0; i < n; i++ {
		row := m.Row(i)
		h := rowHash(row)
		pos := h[0] & mask
		var c int32
		for {
			s := slots[pos]
			if s == 0 {
				c = int32(len(cl.rep))
				slots[pos] = c + 1
				hashes = append(hashes, h)
				cl.rep = append(cl.rep, int32(i))
				cl.size = append(cl.size, 0)
				break
			}
			c = s - 1
			if hashes[c] == h && equalRows(m.Row(int(cl.rep[c])), row) {
				break
			}
			pos = (pos + 1) & mask
		}
		cl.class[i] = c
		cl.size[c]++
	}
	return cl
}

func equalRows(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FillAbsent reads a long-form release as the list form it stands for: it
// returns out with an empty row appended, in the order of users, for
// every one of users that no row of out names (a long-form release's
// users released without features have no row), and how many it
// appended. out is returned as is when none is absent, else copied.
func FillAbsent(users []string, out *matrix.Matrix) (*matrix.Matrix, int64) {
	named := make(map[string]struct{}, out.NumRows())
	for _, u := range out.Users {
		named[u] = struct{}{}
	}
	var absent []string
	for _, u := range users {
		if _, ok := named[u]; !ok {
			named[u] = struct{}{} // a repeated id is filled once
			absent = append(absent, u)
		}
	}
	if len(absent) == 0 {
		return out, 0
	}
	m := matrix.New(out.NumRows()+len(absent), int(out.NumEntries()))
	m.Users = append(m.Users, out.Users...)
	m.Features = append(m.Features, out.Features...)
	m.Offsets = append(m.Offsets[:0], out.Offsets...)
	for _, u := range absent {
		m.Users = append(m.Users, u)
		m.Offsets = append(m.Offsets, int64(len(m.Features)))
	}
	return m, int64(len(absent))
}
