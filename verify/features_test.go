package verify

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// fc is a FeatureCount by (feature, held, released, kept).
func fc(f uint32, held, released, kept int64) FeatureCount {
	return FeatureCount{Feature: f, Held: held, Released: released, Kept: kept}
}

// TestCountFeaturesByHand pins the accounting on inputs counted by hand.
func TestCountFeaturesByHand(t *testing.T) {
	const big = 1 << 30 // a feature id far above the entries: the map path
	exIn, exOut := example()
	tests := []struct {
		name    string
		in, out *matrix.Matrix
		want    []FeatureCount
	}{{
		// a{1,2,3} b{1,2} c{2,4} d{5} e{5,6} → {a,b,c}: {1,2}, {d,e}: {5,6}.
		name: "example", in: exIn, out: exOut,
		want: []FeatureCount{fc(1, 2, 3, 2), fc(2, 3, 3, 3), fc(3, 1, 0, 0), fc(4, 1, 0, 0), fc(5, 2, 2, 2), fc(6, 1, 2, 1)},
	}, {
		// x missing, y repeated in the input (matched at its first row),
		// z extra: its entry is created.
		name: "missing, repeated, extra",
		in:   mat(row{"x", f(1)}, row{"y", f(2, big)}, row{"y", f(2)}),
		out:  mat(row{"y", f(2)}, row{"z", f(big)}),
		want: []FeatureCount{fc(1, 1, 0, 0), fc(2, 2, 1, 1), fc(big, 1, 1, 0)},
	}, {
		name: "empty", in: matrix.New(0, 0), out: matrix.New(0, 0),
	}, {
		name: "rows without features", in: mat(row{"a", nil}, row{"b", nil}), out: mat(row{"b", nil}, row{"a", f(7)}),
		want: []FeatureCount{fc(7, 0, 1, 0)},
	}}
	for _, tc := range tests {
		got, err := CountFeatures(tc.in, tc.out)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: counts %v, want %v", tc.name, got, tc.want)
		}
		crossCheck(t, tc.name, tc.in, tc.out, got)
	}
}

// crossCheck requires the per-feature counts to sum to Measure's totals.
func crossCheck(t *testing.T, name string, in, out *matrix.Matrix, counts []FeatureCount) {
	t.Helper()
	r, err := Measure(in, out)
	if err != nil {
		t.Fatal(err)
	}
	var held, released, kept, suppressed, created int64
	for _, c := range counts {
		held += c.Held
		released += c.Released
		kept += c.Kept
		suppressed += c.Suppressed()
		created += c.Created()
	}
	if held != r.EntriesIn || released != r.EntriesOut || kept != r.EntriesKept || suppressed != r.Suppressed || created != r.Created {
		t.Errorf("%s: features sum to held %d released %d kept %d suppressed %d created %d; the report: in %d out %d kept %d suppressed %d created %d",
			name, held, released, kept, suppressed, created, r.EntriesIn, r.EntriesOut, r.EntriesKept, r.Suppressed, r.Created)
	}
	s := SummarizeFeatures(counts).Proto()
	if s.Input.Held.Sum != r.EntriesIn || s.Input.Suppressed.Sum != r.Suppressed || s.Input.Created.Sum != r.Created || s.Release.Released.Sum != r.EntriesOut {
		t.Errorf("%s: summary sums %d %d %d %d, report %d %d %d %d", name, s.Input.Held.Sum, s.Input.Suppressed.Sum,
			s.Input.Created.Sum, s.Release.Released.Sum, r.EntriesIn, r.Suppressed, r.Created, r.EntriesOut)
	}
}

// TestFeatureSummaryByHand pins the summary of the example: counts,
// distributions, and every list in its order (ties by feature id).
func TestFeatureSummaryByHand(t *testing.T) {
	in, out := example()
	counts, err := CountFeatures(in, out)
	if err != nil {
		t.Fatal(err)
	}
	got := SummarizeFeatures(counts).Proto()
	pc := func(f uint32, held, released, suppressed, created int64) *smoothanonpb.FeatureCount {
		return &smoothanonpb.FeatureCount{Feature: f, Held: held, Released: released, Suppressed: suppressed, Created: created}
	}
	pr := func(f uint32, released int64) *smoothanonpb.FeatureReleased {
		return &smoothanonpb.FeatureReleased{Feature: f, Released: released}
	}
	c1, c2, c3, c4, c5, c6 := pc(1, 2, 3, 0, 1), pc(2, 3, 3, 0, 0), pc(3, 1, 0, 1, 0), pc(4, 1, 0, 1, 0), pc(5, 2, 2, 0, 0), pc(6, 1, 2, 0, 1)
	want := &smoothanonpb.FeatureAccounting{
		ListSize: FeatureListSize,
		Input: &smoothanonpb.FeatureInputFigures{
			Features: 6, Lost: 2, LostEntries: 2, NewFeatures: 0, SuppressedFeatures: 2, CreatedFeatures: 2,
			Held:           &smoothanonpb.Distribution{Count: 6, Sum: 10, Min: 1, Max: 3, Mean: 10.0 / 6, Stddev: stddevOf(1, 2, 3, 1, 1, 2)},
			Suppressed:     &smoothanonpb.Distribution{Count: 6, Sum: 2, Min: 0, Max: 1, Mean: 2.0 / 6, Stddev: stddevOf(0, 0, 1, 1, 0, 0)},
			Created:        &smoothanonpb.Distribution{Count: 6, Sum: 2, Min: 0, Max: 1, Mean: 2.0 / 6, Stddev: stddevOf(1, 0, 0, 0, 0, 1)},
			MostHeld:       []*smoothanonpb.FeatureCount{c2, c1, c5, c3, c4, c6},
			MostSuppressed: []*smoothanonpb.FeatureCount{c3, c4},
			MostCreated:    []*smoothanonpb.FeatureCount{c1, c6},
			LostMostHeld:   []*smoothanonpb.FeatureCount{c3, c4},
		},
		Release: &smoothanonpb.FeatureReleaseFigures{
			Features:      4,
			Released:      &smoothanonpb.Distribution{Count: 4, Sum: 10, Min: 2, Max: 3, Mean: 2.5, Stddev: 0.5},
			MostReleased:  []*smoothanonpb.FeatureReleased{pr(1, 3), pr(2, 3), pr(5, 2), pr(6, 2)},
			LeastReleased: []*smoothanonpb.FeatureReleased{pr(5, 2), pr(6, 2), pr(1, 3), pr(2, 3)},
		},
	}
	if !proto.Equal(got, want) {
		t.Errorf("summary\n%v\nwant\n%v", got, want)
	}
}

// stddevOf is the population standard deviation as Dist
// computes it.
func stddevOf(vs ...int64) float64 {
	var d Dist
	for _, v := range vs {
		d.Add(v)
	}
	return d.Proto().Stddev
}

// TestFeatureListsCapped: a list keeps the FeatureListSize first of its
// order, the smaller id first among equals.
func TestFeatureListsCapped(t *testing.T) {
	var counts []FeatureCount
	for f := range uint32(25) {
		counts = append(counts, fc(f, int64(f%3), 0, 0)) // held 0,1,2,0,1,2,...; all lost but f%3 == 0
	}
	s := SummarizeFeatures(counts)
	var ids []uint32
	for _, c := range s.LostMostHeld {
		ids = append(ids, c.Feature)
	}
	if want := []uint32{2, 5, 8, 11, 14, 17, 20, 23, 1, 4}; !slices.Equal(ids, want) {
		t.Errorf("lost_most_held %v, want %v", ids, want)
	}
	if s.Lost != 16 || s.LostEntries != 8*2+8 || s.Held != 16 {
		t.Errorf("lost %d (%d entries), held %d; want 16 (24), 16", s.Lost, s.LostEntries, s.Held)
	}
}

// TestFeatureSummaryMergeOrder: summaries of any partition of the
// features, merged in any order, equal the summary of all of them.
func TestFeatureSummaryMergeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var counts []FeatureCount
	for f := range uint32(500) {
		held := int64(rng.IntN(6))
		kept := int64(rng.IntN(int(held) + 1))
		counts = append(counts, fc(f, held, kept+int64(rng.IntN(4)), kept))
	}
	whole := SummarizeFeatures(counts)
	for trial := range 20 {
		parts := make([]FeatureSummary, 1+rng.IntN(8))
		for _, i := range rng.Perm(len(counts)) {
			parts[rng.IntN(len(parts))].Add(counts[i])
		}
		var merged FeatureSummary
		for _, i := range rng.Perm(len(parts)) {
			merged.Merge(parts[i])
		}
		if !proto.Equal(merged.Proto(), whole.Proto()) {
			t.Fatalf("trial %d: merged %v\nwhole %v", trial, merged.Proto(), whole.Proto())
		}
	}
}

// TestCountFeaturesRandom compares CountFeatures with a count over (user,
// feature) pairs and the totals of Measure, on random releases with
// shuffled, repeated, missing and extra users.
func TestCountFeaturesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		in, out := matrix.New(0, 0), matrix.New(0, 0)
		rowOf := func() []uint32 {
			var fs []uint32
			for range rng.IntN(6) {
				fs = append(fs, uint32(rng.IntN(10)))
			}
			slices.Sort(fs)
			return slices.Compact(fs)
		}
		n := rng.IntN(20)
		for range n {
			in.Append(fmt.Sprintf("u%d", rng.IntN(n+2)), rowOf())
			if rng.IntN(5) > 0 {
				out.Append(fmt.Sprintf("u%d", rng.IntN(n+3)), rowOf())
			}
		}
		got, err := CountFeatures(in, out)
		if err != nil {
			t.Fatal(err)
		}
		want := naiveFeatures(in, out)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
		crossCheck(t, fmt.Sprintf("trial %d", trial), in, out, got)
	}
}

// naiveFeatures counts by sets of (user, feature) pairs, the first row of
// a user standing for it (as Check matches users).
func naiveFeatures(in, out *matrix.Matrix) []FeatureCount {
	first := map[string]int{}
	for i, u := range in.Users {
		if _, ok := first[u]; !ok {
			first[u] = i
		}
	}
	seenOut := map[string]bool{}
	acc := map[uint32]*FeatureCount{}
	get := func(f uint32) *FeatureCount {
		if acc[f] == nil {
			acc[f] = &FeatureCount{Feature: f}
		}
		return acc[f]
	}
	for i := range in.Users {
		for _, f := range in.Row(i) {
			get(f).Held++
		}
	}
	for i, u := range out.Users {
		j, matched := first[u]
		matched = matched && !seenOut[u]
		seenOut[u] = true
		for _, f := range out.Row(i) {
			c := get(f)
			c.Released++
			if matched && slices.Contains(in.Row(j), f) {
				c.Kept++
			}
		}
	}
	var res []FeatureCount
	for _, c := range acc {
		res = append(res, *c)
	}
	slices.SortFunc(res, func(a, b FeatureCount) int { return int(a.Feature) - int(b.Feature) })
	return res
}

// TestWriteFeatureTable pins the side file's format.
func TestWriteFeatureTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFeatureTable(&b, []FeatureCount{fc(1, 2, 3, 2), fc(3, 1, 0, 0), fc(1<<32-1, 0, 9, 0)}, FeatureTableOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "feature,held,released,suppressed,created\n1,2,3,0,1\n3,1,0,1,0\n4294967295,0,9,0,9\n"
	if b.String() != want {
		t.Errorf("table\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteFeatureTable(&b, nil, FeatureTableOptions{}); err != nil || b.String() != FeatureTableHeader+"\n" {
		t.Errorf("empty table %q, %v", b.String(), err)
	}
	if !reflect.DeepEqual(AppendFeatureLine(nil, fc(0, 0, 0, 0), FeatureTableOptions{}), []byte("0,0,0,0,0\n")) {
		t.Error("zero line")
	}
	// Named features: the name, quoted as CSV needs.
	names := map[uint32]string{1: "/sports/football", 3: `a,"b"`, 4: "-7"}
	b.Reset()
	if err := WriteFeatureTable(&b, []FeatureCount{fc(1, 2, 3, 2), fc(3, 1, 0, 0), fc(4, 1, 1, 1)}, FeatureTableOptions{Name: func(f uint32) string { return names[f] }}); err != nil {
		t.Fatal(err)
	}
	want = "feature,held,released,suppressed,created\n/sports/football,2,3,0,1\n\"a,\"\"b\"\"\",1,0,1,0\n-7,1,1,0,0\n"
	if b.String() != want {
		t.Errorf("named table\n%s\nwant\n%s", b.String(), want)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil || len(rows) != 4 || rows[2][0] != `a,"b"` {
		t.Errorf("named table reads back as %q, %v", rows, err)
	}
	// A release made with a sensitive list: a last column marks them.
	b.Reset()
	if err := WriteFeatureTable(&b, []FeatureCount{fc(1, 2, 3, 2), fc(3, 1, 0, 0)}, FeatureTableOptions{Sensitive: SortedSet([]uint32{3, 9})}); err != nil {
		t.Fatal(err)
	}
	want = "feature,held,released,suppressed,created,sensitive\n1,2,3,0,1,0\n3,1,0,1,0,1\n"
	if b.String() != want {
		t.Errorf("sensitive table\n%s\nwant\n%s", b.String(), want)
	}
	for head, is := range map[string]bool{want: true, FeatureTableHeader + "\n": true, FeatureTableHeader + ",x\n": false, "feature,held\n": false} {
		if IsFeatureTableHead([]byte(head)) != is {
			t.Errorf("IsFeatureTableHead(%q) = %v", head, !is)
		}
	}
}

// TestNameFeatures: every list of the report's accounting gets names.
func TestNameFeatures(t *testing.T) {
	a := SummarizeFeatures([]FeatureCount{fc(1, 2, 3, 2), fc(3, 4, 0, 0), fc(5, 0, 2, 0)}).Proto()
	NameFeatures(a, func(f uint32) string { return fmt.Sprint("n", f) })
	n := 0
	for _, l := range [][]*smoothanonpb.FeatureCount{a.Input.MostHeld, a.Input.MostSuppressed, a.Input.MostCreated, a.Input.LostMostHeld} {
		for _, c := range l {
			if c.Name != fmt.Sprint("n", c.Feature) {
				t.Errorf("feature %d named %q", c.Feature, c.Name)
			}
			n++
		}
	}
	for _, c := range append(a.Release.MostReleased, a.Release.LeastReleased...) {
		if c.Name != fmt.Sprint("n", c.Feature) {
			t.Errorf("released feature %d named %q", c.Feature, c.Name)
		}
		n++
	}
	if n < 6 {
		t.Errorf("%d features named: the lists are too short to show anything", n)
	}
	NameFeatures(nil, nil) // no accounting: nothing to name
}
