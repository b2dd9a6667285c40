package verify

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// FeatureCount is one feature's accounting of a release against its
// input, counted as Check counts the totals: Held is the input entries
// holding the feature (every input row), Released the release entries
// showing it (every release row), Kept those of a release row whose
// matched input row holds it too. A user matched at no input row (extra,
// or a repeated user's later row) keeps nothing, so its entries are
// created; an input row matched by no release row keeps nothing, so its
// entries are suppressed. Summed over features, Held, Released and Kept
// are the report's EntriesIn, EntriesOut and EntriesKept.
type FeatureCount struct {
	Feature              uint32
	Held, Released, Kept int64
}

// Suppressed is the feature's input entries not released for their user.
func (c FeatureCount) Suppressed() int64 { return c.Held - c.Kept }

// Created is the feature's release entries its user did not hold.
func (c FeatureCount) Created() int64 { return c.Released - c.Kept }

// Add returns the sum of two counts of one feature.
func (c FeatureCount) Add(o FeatureCount) FeatureCount {
	return FeatureCount{Feature: c.Feature, Held: c.Held + o.Held, Released: c.Released + o.Released, Kept: c.Kept + o.Kept}
}

// CountFeatures returns the accounting of every feature held in the
// input or shown in the release, sorted by feature id. Rows are matched
// by user id as Check matches them; the error is only for a malformed
// matrix (rows not sorted and repeat-free). It holds one count per
// feature id up to the largest (24 bytes each) when that is no more than
// four times the entries, else a map entry per feature.
func CountFeatures(in, out *matrix.Matrix) ([]FeatureCount, error) {
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if in.NumRows() > 1<<31-1 || out.NumRows() > 1<<31-1 {
		return nil, fmt.Errorf("more than 2^31-1 rows")
	}
	var scratch smoothanonpb.RunReport
	var pr problems
	var match []int32
	if strictlySorted(in.Users) && strictlySorted(out.Users) {
		match = matchSorted(in.Users, out.Users, &scratch, &pr)
	} else {
		match = matchIndexed(in.Users, out.Users, &scratch, &pr)
	}
	var top uint32
	for _, f := range in.Features {
		top = max(top, f)
	}
	for _, f := range out.Features {
		top = max(top, f)
	}
	entries := in.NumEntries() + out.NumEntries()
	acc := newFeatureAcc(int64(top) < 4*entries+1024, int(top)+1)
	for _, f := range in.Features {
		acc.at(f)[0]++
	}
	for i := range out.Users {
		o := out.Row(i)
		for _, f := range o {
			acc.at(f)[1]++
		}
		if j := match[i]; j >= 0 {
			forCommon(in.Row(int(j)), o, func(f uint32) { acc.at(f)[2]++ })
		}
	}
	return acc.counts(), nil
}

// forCommon calls fn for every feature of both sorted lists, in order.
func forCommon(a, b []uint32, fn func(uint32)) {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			fn(a[i])
			i++
			j++
		}
	}
}

// featureAcc holds (held, released, kept) per feature: in an array
// indexed by id, or a map.
type featureAcc struct {
	dense  [][3]int64
	sparse map[uint32]*[3]int64
}

func newFeatureAcc(dense bool, n int) *featureAcc {
	if dense {
		return &featureAcc{dense: make([][3]int64, n)}
	}
	return &featureAcc{sparse: map[uint32]*[3]int64{}}
}

func (a *featureAcc) at(f uint32) *[3]int64 {
	if a.dense != nil {
		return &a.dense[f]
	}
	v := a.sparse[f]
	if v == nil {
		v = new([3]int64)
		a.sparse[f] = v
	}
	return v
}

func (a *featureAcc) counts() []FeatureCount {
	var out []FeatureCount
	add := func(f uint32, v [3]int64) {
		if v[0] != 0 || v[1] != 0 {
			out = append(out, FeatureCount{Feature: f, Held: v[0], Released: v[1], Kept: v[2]})
		}
	}
	for f, v := range a.dense {
		add(uint32(f), v)
	}
	if a.sparse != nil {
		for f, v := range a.sparse {
			add(f, *v)
		}
		slices.SortFunc(out, func(x, y FeatureCount) int { return cmp.Compare(x.Feature, y.Feature) })
	}
	return out
}

// FeatureListSize is how many features each list of a FeatureSummary
// holds at most.
const FeatureListSize = 10

// FeatureSummary summarizes FeatureCounts into the report's
// FeatureAccounting: counts, distributions and the top and bottom lists.
// Add one count per feature (a feature added twice is two features); Merge
// is associative and commutative and the lists are totally ordered (ties
// broken by the smaller feature id), so summaries of any partition of the
// features, merged in any order, give the same summary.
type FeatureSummary struct {
	// Features held in the input; released; released but held by no
	// input row; held and released nowhere, and their input entries;
	// with a suppressed, with a created entry.
	Held, Released, New, Lost, LostEntries, Suppressed, Created int64
	// Per feature: over every feature added (HeldDist, SuppressedDist,
	// CreatedDist), over the released ones (ReleasedDist).
	HeldDist, SuppressedDist, CreatedDist, ReleasedDist Dist
	// The lists, at most FeatureListSize each, in their order.
	MostHeld, MostSuppressed, MostCreated, LostMostHeld, MostReleased, LeastReleased []FeatureCount
}

// The lists' orders: each is a "comes first" over counts, the smaller
// feature id first among equals.
func byDesc(v func(FeatureCount) int64) func(a, b FeatureCount) int {
	return func(a, b FeatureCount) int {
		if c := cmp.Compare(v(b), v(a)); c != 0 {
			return c
		}
		return cmp.Compare(a.Feature, b.Feature)
	}
}

var (
	orderHeld       = byDesc(func(c FeatureCount) int64 { return c.Held })
	orderSuppressed = byDesc(FeatureCount.Suppressed)
	orderCreated    = byDesc(FeatureCount.Created)
	orderReleased   = byDesc(func(c FeatureCount) int64 { return c.Released })
	orderFewest     = byDesc(func(c FeatureCount) int64 { return -c.Released })
)

// keepTop inserts c into the list l ordered by order, keeping the first
// FeatureListSize.
func keepTop(l []FeatureCount, c FeatureCount, order func(a, b FeatureCount) int) []FeatureCount {
	if len(l) == FeatureListSize && order(c, l[len(l)-1]) >= 0 {
		return l
	}
	i, _ := slices.BinarySearchFunc(l, c, order)
	l = slices.Insert(l, i, c)
	if len(l) > FeatureListSize {
		l = l[:FeatureListSize]
	}
	return l
}

// mergeTop merges two lists ordered by order, keeping the first
// FeatureListSize.
func mergeTop(a, b []FeatureCount, order func(a, b FeatureCount) int) []FeatureCount {
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, order)
	if len(out) > FeatureListSize {
		out = out[:FeatureListSize]
	}
	return out
}

// Add counts one feature.
func (s *FeatureSummary) Add(c FeatureCount) {
	if c.Held > 0 {
		s.Held++
		s.MostHeld = keepTop(s.MostHeld, c, orderHeld)
	}
	if c.Released > 0 {
		s.Released++
		s.ReleasedDist.Add(c.Released)
		s.MostReleased = keepTop(s.MostReleased, c, orderReleased)
		s.LeastReleased = keepTop(s.LeastReleased, c, orderFewest)
	}
	if c.Held == 0 && c.Released > 0 {
		s.New++
	}
	if c.Held > 0 && c.Released == 0 {
		s.Lost++
		s.LostEntries += c.Held
		s.LostMostHeld = keepTop(s.LostMostHeld, c, orderHeld)
	}
	if c.Suppressed() > 0 {
		s.Suppressed++
		s.MostSuppressed = keepTop(s.MostSuppressed, c, orderSuppressed)
	}
	if c.Created() > 0 {
		s.Created++
		s.MostCreated = keepTop(s.MostCreated, c, orderCreated)
	}
	s.HeldDist.Add(c.Held)
	s.SuppressedDist.Add(c.Suppressed())
	s.CreatedDist.Add(c.Created())
}

// Merge adds o's features to s.
func (s *FeatureSummary) Merge(o FeatureSummary) {
	s.Held += o.Held
	s.Released += o.Released
	s.New += o.New
	s.Lost += o.Lost
	s.LostEntries += o.LostEntries
	s.Suppressed += o.Suppressed
	s.Created += o.Created
	s.HeldDist.Merge(o.HeldDist)
	s.SuppressedDist.Merge(o.SuppressedDist)
	s.CreatedDist.Merge(o.CreatedDist)
	s.ReleasedDist.Merge(o.ReleasedDist)
	s.MostHeld = mergeTop(s.MostHeld, o.MostHeld, orderHeld)
	s.MostSuppressed = mergeTop(s.MostSuppressed, o.MostSuppressed, orderSuppressed)
	s.MostCreated = mergeTop(s.MostCreated, o.MostCreated, orderCreated)
	s.LostMostHeld = mergeTop(s.LostMostHeld, o.LostMostHeld, orderHeld)
	s.MostReleased = mergeTop(s.MostReleased, o.MostReleased, orderReleased)
	s.LeastReleased = mergeTop(s.LeastReleased, o.LeastReleased, orderFewest)
}

// SummarizeFeatures adds every count to a new summary.
func SummarizeFeatures(counts []FeatureCount) *FeatureSummary {
	s := &FeatureSummary{}
	for _, c := range counts {
		s.Add(c)
	}
	return s
}

// appendCSVField appends s as one CSV field, quoted (quotes doubled) when
// it holds a comma, a quote or a line break.
func appendCSVField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	return append(append(b, '"'), append([]byte(strings.ReplaceAll(s, `"`, `""`)), '"')...)
}

// NameFeatures sets the name of every feature a's lists show, for a
// release of named features.
func NameFeatures(a *smoothanonpb.FeatureAccounting, name func(uint32) string) {
	if a == nil {
		return
	}
	if in := a.Input; in != nil {
		for _, l := range [][]*smoothanonpb.FeatureCount{in.MostHeld, in.MostSuppressed, in.MostCreated, in.LostMostHeld} {
			for _, c := range l {
				c.Name = name(c.Feature)
			}
		}
	}
	if out := a.Release; out != nil {
		for _, l := range [][]*smoothanonpb.FeatureReleased{out.MostReleased, out.LeastReleased} {
			for _, c := range l {
				c.Name = name(c.Feature)
			}
		}
	}
}

// Proto returns the summary as the report's FeatureAccounting.
func (s *FeatureSummary) Proto() *smoothanonpb.FeatureAccounting {
	counts := func(l []FeatureCount) []*smoothanonpb.FeatureCount {
		out := make([]*smoothanonpb.FeatureCount, len(l))
		for i, c := range l {
			out[i] = &smoothanonpb.FeatureCount{Feature: c.Feature, Held: c.Held, Released: c.Released, Suppressed: c.Suppressed(), Created: c.Created()}
		}
		return out
	}
	released := func(l []FeatureCount) []*smoothanonpb.FeatureReleased {
		out := make([]*smoothanonpb.FeatureReleased, len(l))
		for i, c := range l {
			out[i] = &smoothanonpb.FeatureReleased{Feature: c.Feature, Released: c.Released}
		}
		return out
	}
	return &smoothanonpb.FeatureAccounting{
		ListSize: FeatureListSize,
		Input: &smoothanonpb.FeatureInputFigures{
			Features:           s.Held,
			Lost:               s.Lost,
			LostEntries:        s.LostEntries,
			NewFeatures:        s.New,
			SuppressedFeatures: s.Suppressed,
			CreatedFeatures:    s.Created,
			Held:               s.HeldDist.Proto(),
			Suppressed:         s.SuppressedDist.Proto(),
			Created:            s.CreatedDist.Proto(),
			MostHeld:           counts(s.MostHeld),
			MostSuppressed:     counts(s.MostSuppressed),
			MostCreated:        counts(s.MostCreated),
			LostMostHeld:       counts(s.LostMostHeld),
		},
		Release: &smoothanonpb.FeatureReleaseFigures{
			Features:      s.Released,
			Released:      s.ReleasedDist.Proto(),
			MostReleased:  released(s.MostReleased),
			LeastReleased: released(s.LeastReleased),
		},
	}
}

// FeatureTableHeader is the first line of a feature table
// (WriteFeatureTable), without its newline; a table of a release made
// with a sensitive list adds the column SensitiveColumn.
const FeatureTableHeader = "feature,held,released,suppressed,created"

// SensitiveColumn is the last column of a feature table written with
// FeatureTableOptions.Sensitive.
const SensitiveColumn = "sensitive"

// IsFeatureTableHead says whether b begins with a feature table's header
// line, with its newline.
func IsFeatureTableHead(b []byte) bool {
	return bytes.HasPrefix(b, []byte(FeatureTableHeader+"\n")) || bytes.HasPrefix(b, []byte(FeatureTableHeader+","+SensitiveColumn+"\n"))
}

// FeatureTableOptions say what a feature table shows besides the counts.
type FeatureTableOptions struct {
	// Name is the name of a feature id, for named features. Optional;
	// default the id.
	Name func(uint32) string
	// Sensitive says whether a feature is on the release's sensitive
	// list, and adds the column SensitiveColumn (1 or 0). Optional;
	// default no column.
	Sensitive func(uint32) bool
}

// SortedSet is the membership function of ids (ascending).
func SortedSet(ids []uint32) func(uint32) bool {
	return func(f uint32) bool {
		_, ok := slices.BinarySearch(ids, f)
		return ok
	}
}

// WriteFeatureTable writes counts as a feature table: CSV (RFC 4180), the
// header FeatureTableHeader (and SensitiveColumn, with opts.Sensitive),
// then one line per count in the order given, each field a decimal
// integer, except that with opts.Name (named features) the feature field
// is its name, quoted when it holds a comma, a quote or a line break. The
// table counts what the input's users held: it is as private as the
// input.
func WriteFeatureTable(w io.Writer, counts []FeatureCount, opts FeatureTableOptions) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(FeatureTableHeader)
	if opts.Sensitive != nil {
		bw.WriteString("," + SensitiveColumn)
	}
	bw.WriteString("\n")
	var line []byte
	for _, c := range counts {
		line = AppendFeatureLine(line[:0], c, opts)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// AppendFeatureLine appends c's line of a feature table to b (opts: as
// WriteFeatureTable).
func AppendFeatureLine(b []byte, c FeatureCount, opts FeatureTableOptions) []byte {
	if opts.Name != nil {
		b = appendCSVField(b, opts.Name(c.Feature))
	} else {
		b = strconv.AppendUint(b, uint64(c.Feature), 10)
	}
	for _, v := range []int64{c.Held, c.Released, c.Suppressed(), c.Created()} {
		b = append(b, ',')
		b = strconv.AppendInt(b, v, 10)
	}
	switch {
	case opts.Sensitive == nil:
	case opts.Sensitive(c.Feature):
		b = append(b, ",1"...)
	default:
		b = append(b, ",0"...)
	}
	return append(b, '\n')
}
