package transforms

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

func init() {
	beam.RegisterFunction(describeFeatures)
}

// describeFeatures prints the accounting a Stats carries.
func describeFeatures(st Stats) string {
	return fmt.Sprintf("%+v table=%d", st.Features, st.FeatureTableRows)
}

// accountingBlocks is a release of 9 users in three blocks, counted by
// hand below. Features 4096 and 1<<22 sit in other blocks of feature ids
// (1<<22 beyond the bundles' arrays).
func accountingBlocks() (blocks []OutBlock, in, out *matrix.Matrix) {
	const far = 1 << 22
	type row struct {
		user    string
		in, out []uint32
	}
	rows := []row{
		// user, input row, released row
		{"a", []uint32{1, 2, 3}, []uint32{1, 2}},
		{"b", []uint32{1, 2}, []uint32{1, 2}},
		{"c", []uint32{2, 4}, []uint32{1, 2}},
		{"d", []uint32{5, 4096}, []uint32{5, 4096}},
		{"e", []uint32{5}, []uint32{5, 4096}},
		{"f", []uint32{4096, far}, []uint32{5, 4096}},
		{"g", []uint32{far}, nil},
		{"h", nil, nil},
		{"i", []uint32{far, far + 1}, nil},
	}
	in, out = matrix.New(0, 0), matrix.New(0, 0)
	for i, r := range rows {
		if i%3 == 0 {
			blocks = append(blocks, OutBlock{In: emptyMatrix(), Out: emptyMatrix()})
		}
		b := &blocks[len(blocks)-1]
		b.In.Append(r.user, r.in)
		b.Out.Append(r.user, r.out)
		in.Append(r.user, r.in)
		out.Append(r.user, r.out)
	}
	return blocks, in, out
}

// TestAccounting runs Accounting on prism: its summary and table are the
// in-process accounting of the same release (verify.CountFeatures), whose
// counts this test pins by hand, and they sum to Verify's totals.
func TestAccounting(t *testing.T) {
	blocks, in, out := accountingBlocks()
	counts, err := verify.CountFeatures(in, out)
	if err != nil {
		t.Fatal(err)
	}
	fc := func(f uint32, held, released, kept int64) verify.FeatureCount {
		return verify.FeatureCount{Feature: f, Held: held, Released: released, Kept: kept}
	}
	want := []verify.FeatureCount{fc(1, 2, 3, 2), fc(2, 3, 3, 3), fc(3, 1, 0, 0), fc(4, 1, 0, 0),
		fc(5, 2, 3, 2), fc(4096, 2, 3, 2), fc(1<<22, 3, 0, 0), fc(1<<22+1, 1, 0, 0)}
	if !reflect.DeepEqual(counts, want) {
		t.Fatalf("in-process counts %v, want %v", counts, want)
	}
	var sum verify.FeatureCount
	for _, c := range counts {
		sum = sum.Add(c)
	}
	if sum.Held != in.NumEntries() || sum.Released != out.NumEntries() || sum.Suppressed() != 6 || sum.Created() != 3 {
		t.Fatalf("counts sum to %+v", sum)
	}
	table := filepath.Join(t.TempDir(), "features.csv")
	var elems []any
	for _, b := range blocks {
		elems = append(elems, b)
	}
	p, s, col := ptest.Create(elems)
	acc := Accounting(s, col, AccountingParams{Table: table})
	verified := Verify(s, col, VerifyParams{K: 1})
	all := beam.Combine(s, mergeStats, beam.Flatten(s, acc, verified))
	passert.Equals(s, beam.ParDo(s, describeFeatures, all),
		describeFeatures(Stats{Features: *verify.SummarizeFeatures(counts), FeatureTableRows: int64(len(counts))}))
	passert.Equals(s, beam.ParDo(s, describeTotals, all), fmt.Sprintf("in=%d out=%d kept=%d", sum.Held, sum.Released, sum.Kept))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	var wantTable bytes.Buffer
	verify.WriteFeatureTable(&wantTable, counts, verify.FeatureTableOptions{})
	if got, err := os.ReadFile(table); err != nil || string(got) != wantTable.String() {
		t.Errorf("table %q (%v), want %q", got, err, wantTable.String())
	}
}

func init() { beam.RegisterFunction(describeTotals) }

// describeTotals prints Verify's totals of a Stats.
func describeTotals(st Stats) string {
	return fmt.Sprintf("in=%d out=%d kept=%d", st.EntriesIn, st.EntriesOut, st.Kept)
}

// TestAccountingNoTable: without Table the job writes nothing and the
// summary is the same.
func TestAccountingNoTable(t *testing.T) {
	blocks, in, out := accountingBlocks()
	counts, _ := verify.CountFeatures(in, out)
	p, s, col := ptest.Create([]any{blocks[2], blocks[0], blocks[1]})
	all := beam.Combine(s, mergeStats, Accounting(s, col, AccountingParams{}))
	passert.Equals(s, beam.ParDo(s, describeFeatures, all), describeFeatures(Stats{Features: *verify.SummarizeFeatures(counts)}))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestFeatCounts: the coder round-trips, blocks merge by addition, and a
// bundle's counts leave in blocks of feature ids.
func TestFeatCounts(t *testing.T) {
	a := featCounts{Feats: []uint32{1, 7}, Held: []int64{3, 1 << 40}, Released: []int64{2, 0}, Kept: []int64{2, 0}}
	b := featCounts{Feats: []uint32{7, 9}, Held: []int64{1, 0}, Released: []int64{1, 5}, Kept: []int64{1, 0}}
	got, err := decFeatCounts(encFeatCounts(a))
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Errorf("round trip %+v, %v", got, err)
	}
	if _, err := decFeatCounts(encFeatCounts(a)[:5]); err == nil {
		t.Error("a truncated block decoded")
	}
	want := featCounts{Feats: []uint32{1, 7, 9}, Held: []int64{3, 1<<40 + 1, 0}, Released: []int64{2, 1, 5}, Kept: []int64{2, 1, 0}}
	var fn featCombineFn
	one := func(x featCounts) featAcc { return fn.AddInput(fn.CreateAccumulator(), x) }
	if m := fn.ExtractOutput(fn.MergeAccumulators(one(a), one(b))); !reflect.DeepEqual(m, want) {
		t.Errorf("merge %+v, want %+v", m, want)
	}
	if m := fn.ExtractOutput(fn.AddInput(one(b), a)); !reflect.DeepEqual(m, want) {
		t.Errorf("add the other way %+v", m)
	}
	if m := fn.ExtractOutput(fn.MergeAccumulators(fn.CreateAccumulator(), fn.MergeAccumulators(one(a), fn.CreateAccumulator()))); !reflect.DeepEqual(m, a) {
		t.Errorf("merged with empty accumulators: %+v", m)
	}
	if acc, err := decFeatAcc(encFeatAcc(one(b))); err != nil || !reflect.DeepEqual(fn.ExtractOutput(acc), b) {
		t.Errorf("accumulator round trip %+v, %v", acc, err)
	}
	if _, err := decFeatAcc(encFeatCounts(featCounts{Feats: []uint32{1, 4096}, Held: []int64{1, 1}, Released: []int64{0, 0}, Kept: []int64{0, 0}})); err == nil {
		t.Error("an accumulator of two blocks decoded")
	}
	if acc, err := decFeatAcc(encFeatAcc(fn.CreateAccumulator())); err != nil || acc.N != nil {
		t.Errorf("empty accumulator round trip %+v, %v", acc, err)
	}

	afn := &accountFn{}
	blocks, _, _ := accountingBlocks()
	emitted := map[int64]featCounts{}
	emit := func(k int64, b featCounts) {
		if _, twice := emitted[k]; twice {
			t.Errorf("block %d emitted twice", k)
		}
		emitted[k] = b
	}
	for _, b := range blocks[:2] {
		afn.ProcessElement(b, emit)
	}
	afn.FinishBundle(emit)
	if len(emitted) != 3 || len(emitted[0].Feats) != 5 || !reflect.DeepEqual(emitted[1], featCounts{Feats: []uint32{4096}, Held: []int64{2}, Released: []int64{3}, Kept: []int64{2}}) ||
		!reflect.DeepEqual(emitted[1<<22>>blockBits], featCounts{Feats: []uint32{1 << 22}, Held: []int64{1}, Released: []int64{0}, Kept: []int64{0}}) {
		t.Errorf("bundle emitted %+v", emitted)
	}
	clear(emitted)
	afn.FinishBundle(emit)
	if len(emitted) != 0 {
		t.Errorf("an empty bundle emitted %+v", emitted)
	}
}

// TestFeatCountsCheck refuses malformed blocks with one line naming them.
func TestFeatCountsCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		blk  int64
		b    featCounts
		want string
	}{
		{"lengths", 0, featCounts{Feats: []uint32{1}, Held: []int64{1}}, "malformed block 0"},
		{"other block", 0, featCounts{Feats: []uint32{4096}, Held: []int64{1}, Released: []int64{1}, Kept: []int64{1}}, "feature 4096 out of place in block 0"},
		{"unsorted", 0, featCounts{Feats: []uint32{2, 1}, Held: []int64{1, 1}, Released: []int64{1, 1}, Kept: []int64{0, 0}}, "feature 1 out of place"},
		{"kept too many", 0, featCounts{Feats: []uint32{1}, Held: []int64{1}, Released: []int64{3}, Kept: []int64{2}}, "feature 1 kept 2 of 1 held"},
	} {
		err := c.b.check(c.blk)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := (featCounts{Feats: []uint32{4096, 4097}, Held: []int64{1, 0}, Released: []int64{0, 1}, Kept: []int64{0, 0}}).check(1); err != nil {
		t.Errorf("a good block refused: %v", err)
	}
}
