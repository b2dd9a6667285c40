package transforms

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
)

func TestClassAccCoder(t *testing.T) {
	c := ClassAcc{Rows: 5, Out: []uint32{1, 4}, Hits: []int64{5, 2}, Collisions: 1}
	if got, err := decClassAcc(encClassAcc(c)); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("ClassAcc %+v -> %+v, %v", c, got, err)
	}
}

func TestCheckParams(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string // "" = valid
	}{
		{"chunk ok", checkChunkParams(ChunkParams{ChunkSize: 100, MinRows: 16, K: 8}), ""},
		{"chunk k", checkChunkParams(ChunkParams{ChunkSize: 100, MinRows: 16, K: 1}), "k=1"},
		{"chunk min rows", checkChunkParams(ChunkParams{ChunkSize: 100, MinRows: 4, K: 8}), "min rows 4"},
		{"chunk size", checkChunkParams(ChunkParams{ChunkSize: 10, MinRows: 16, K: 8}), "chunk size 10"},
		{"chunk samples", checkChunkParams(ChunkParams{ChunkSize: 100, MinRows: 16, K: 8, SamplesPerChunk: -1}), "samples per chunk -1"},
		{"write ok", checkWriteParams(WriteParams{Dir: "x", Rows: 1}), ""},
		{"write rows", checkWriteParams(WriteParams{Dir: "x"}), "0 rows"},
		{"write entries", checkWriteParams(WriteParams{Dir: "x", Rows: 1, MaxEntries: -1}), "at most -1 entries"},
		{"write dir", checkWriteParams(WriteParams{}), "no output directory"},
		{"write shards", checkWriteParams(WriteParams{Dir: "x", Rows: 1, Shards: -2}), "shards -2"},
		{"write per shard", checkWriteParams(WriteParams{Dir: "x", Rows: 1, RowsPerShard: -3}), "rows per shard -3"},
		{"write row groups", checkWriteParams(WriteParams{Dir: "x", Rows: 1, RowGroupRows: -4}), "row group rows -4"},
		{"write runs", checkWriteParams(WriteParams{Dir: "x", Rows: 1, RunEntries: -5}), "entries -5"},
		{"write bucket root", checkWriteParams(WriteParams{Dir: "gs://bkt/", Rows: 1}), "gs://bkt/ is a bucket root"},
		{"write bucket root scratch", checkWriteParams(WriteParams{Dir: "gs://bkt", Rows: 1, Scratch: "gs://bkt/tmp"}), ""},
		{"write bucket prefix", checkWriteParams(WriteParams{Dir: "s3://bkt/rel", Rows: 1}), ""},
		{"write scratch is dir", checkWriteParams(WriteParams{Dir: "a/rel", Rows: 1, Scratch: "a/rel/"}), "both a/rel"},
		{"verify ok", checkVerifyParams(VerifyParams{K: 2}), ""},
		{"verify k", checkVerifyParams(VerifyParams{K: 0}), "0"},
		{"report ok", checkReportParams(ReportParams{Staging: "s", K: 2}), ""},
		{"report staging", checkReportParams(ReportParams{K: 2}), "no staging"},
		{"report k", checkReportParams(ReportParams{Staging: "s", K: -1}), "-1"},
		{"solve ok", CheckSolveParams(SolveParams{Solver: solver.Params{K: 4}}), ""},
		{"solve k", CheckSolveParams(SolveParams{Solver: solver.Params{K: 1}}), "k >= 2"},
		{"solve workers", CheckSolveParams(SolveParams{Solver: solver.Params{K: 4, Workers: -1}}), "workers = -1"},
		{"solve search", CheckSolveParams(SolveParams{Solver: solver.Params{K: 4, Search: 9}}), "invalid search 9"},
		{"solve pool share", CheckSolveParams(SolveParams{Solver: solver.Params{K: 4}, PoolShare: 0.9}), "0.9"},
	}
	for _, c := range cases {
		if c.want == "" {
			if c.err != nil {
				t.Errorf("%s: %v", c.name, c.err)
			}
			continue
		}
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", c.name, c.err, c.want)
		}
	}
}

func TestSampleThreshold(t *testing.T) {
	if got := sampleThreshold(1000, 100, 128); got != math.MaxUint64 {
		t.Errorf("small input: threshold %x, want all rows", got)
	}
	// 1e7 rows, chunks of 1e5: 100 chunks × 128 = 12800 samples, rate 1.28e-3.
	got := float64(sampleThreshold(1e7, 1e5, 128)) / math.MaxUint64
	if math.Abs(got-1.28e-3) > 1e-9 {
		t.Errorf("rate %g, want 1.28e-3", got)
	}
	if numChunks(50, 100) != 1 || numChunks(250, 100) != 2 {
		t.Error("numChunks must round down and be at least 1")
	}
}

func TestMergeChunks(t *testing.T) {
	cases := []struct {
		name  string
		sizes map[int64]int64
		min   int64
		want  map[int64]int64
		count int64
	}{
		{"all big", map[int64]int64{0: 20, 1: 30}, 16, map[int64]int64{0: 0, 1: 1}, 2},
		{"small middle", map[int64]int64{0: 20, 1: 5, 2: 12, 3: 40}, 16, map[int64]int64{0: 0, 1: 1, 2: 1, 3: 3}, 3},
		{"small last", map[int64]int64{0: 20, 1: 30, 2: 3}, 16, map[int64]int64{0: 0, 1: 1, 2: 1}, 2},
		{"all small", map[int64]int64{0: 3, 2: 4}, 16, map[int64]int64{0: 0, 2: 0}, 1},
		{"gaps", map[int64]int64{3: 16, 7: 16}, 16, map[int64]int64{3: 3, 7: 7}, 2},
		{"one", map[int64]int64{0: 100}, 16, map[int64]int64{0: 0}, 1},
		{"none", map[int64]int64{}, 16, map[int64]int64{}, 0},
	}
	for _, c := range cases {
		if got := mergeChunks(c.sizes, c.min); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := countMerged(mergeChunks(c.sizes, c.min)); got != c.count {
			t.Errorf("%s: %d chunks, want %d", c.name, got, c.count)
		}
	}
}

func TestSamplesPerChunk(t *testing.T) {
	for _, c := range []struct{ given, minRows, want int64 }{
		{0, 16, DefaultSamplesPerChunk}, // k = 8
		{0, 64, DefaultSamplesPerChunk}, // k = 32
		{0, 100, 200},                   // k = 50: half a chunk of samples still holds 2k
		{40, 100, 40},                   // given
	} {
		if got := samplesPerChunk(ChunkParams{SamplesPerChunk: c.given, MinRows: c.minRows}); got != c.want {
			t.Errorf("given %d, min rows %d: %d samples per chunk, want %d", c.given, c.minRows, got, c.want)
		}
	}
}

// TestMergeSampled: chunks are merged by their sampled rows as
// mergeChunks merges by rows, and a chunk without sampled rows (it may
// hold unsampled ones) joins the group of the next chunk that has some,
// or of the last one.
func TestMergeSampled(t *testing.T) {
	cases := []struct {
		name    string
		sampled []int64
		want    map[int64]int64
	}{
		{"all big", []int64{20, 30}, map[int64]int64{0: 0, 1: 1}},
		{"small middle", []int64{20, 5, 12, 40}, map[int64]int64{0: 0, 1: 1, 2: 1, 3: 3}},
		{"empty first", []int64{0, 20, 30}, map[int64]int64{0: 1, 1: 1, 2: 2}},
		{"empty middle", []int64{20, 0, 30}, map[int64]int64{0: 0, 1: 2, 2: 2}},
		{"empty last", []int64{20, 30, 0, 0}, map[int64]int64{0: 0, 1: 1, 2: 1, 3: 1}},
		{"none sampled", []int64{0, 0}, map[int64]int64{0: 0, 1: 0}},
		{"one", []int64{3}, map[int64]int64{0: 0}},
	}
	for _, c := range cases {
		if got := mergeSampled(c.sampled, 16); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestJudgeClass(t *testing.T) {
	a := ClassAcc{Rows: 1, Out: []uint32{1, 2}, Hits: []int64{1, 0}}
	b := ClassAcc{Rows: 1, Out: []uint32{1, 2}, Hits: []int64{1, 1}}
	m := mergeClass(mergeClass(a, b), ClassAcc{Rows: 2, Out: []uint32{1, 2}, Hits: []int64{0, 0}})
	if m.Rows != 4 || !reflect.DeepEqual(m.Hits, []int64{2, 1}) {
		t.Fatalf("merged %+v", m)
	}
	var st Stats
	judgeClass(&st, m, 4, matrix.Smooth)
	// feature 1 held by 2 of 4 (a tie is fine), feature 2 by 1 of 4 (violation).
	if st.Classes != 1 || st.SmallClasses != 0 || st.MajorityViolations != 1 || len(st.Problems) != 1 {
		t.Errorf("smooth: %+v", st)
	}
	st = Stats{}
	judgeClass(&st, m, 5, matrix.NonSmooth)
	if st.SmallClasses != 1 || st.MajorityViolations != 0 {
		t.Errorf("nonsmooth k=5: %+v", st)
	}
	coll := mergeClass(a, ClassAcc{Rows: 3, Out: []uint32{9}, Hits: []int64{3}})
	if coll.Rows != 1 || coll.Collisions != 3 {
		t.Errorf("collision merge %+v", coll)
	}
}

// TestVerifyBlocks accumulates classes over blocks and bundles: the
// merged class blocks must not depend on how rows were bundled, and
// utility is counted per row.
func TestVerifyBlocks(t *testing.T) {
	in := blockOf(testRow{"a", []uint32{1, 2}}, testRow{"b", []uint32{1}}, testRow{"c", []uint32{2, 3}}, testRow{"d", nil})
	out := blockOf(testRow{"a", []uint32{1, 2}}, testRow{"b", []uint32{1, 2}}, testRow{"c", []uint32{2}}, testRow{"d", []uint32{2}})
	run := func(blocks ...OutBlock) (map[int64]classBlock, Stats) {
		fn := &verifyBlockFn{}
		got := map[int64]classBlock{}
		var st Stats
		emitClass := func(k int64, b classBlock) {
			if old, ok := got[k]; ok {
				b = mergeClassBlocks(old, b)
			}
			got[k] = b
		}
		for _, b := range blocks {
			fn.ProcessElement(context.Background(), b, emitClass, nil)
			fn.FinishBundle(emitClass, func(s Stats) { st = mergeStats(st, s) })
		}
		return got, st
	}
	whole, st := run(OutBlock{In: in, Out: out})
	split, st2 := run(OutBlock{In: slice(&in, 0, 1), Out: slice(&out, 0, 1)}, OutBlock{In: slice(&in, 1, 4), Out: slice(&out, 1, 4)})
	if !reflect.DeepEqual(whole, split) || !reflect.DeepEqual(st, st2) {
		t.Errorf("bundling changed the classes: %+v vs %+v; %+v vs %+v", whole, split, st, st2)
	}
	if st.Rows != 4 || st.EntriesIn != 5 || st.EntriesOut != 6 || st.Kept != 4 || st.Created != 2 {
		t.Errorf("row stats %+v", st)
	}
	var classes []ClassAcc
	for _, b := range whole {
		classes = append(classes, b.Acc...)
	}
	slices.SortFunc(classes, func(x, y ClassAcc) int { return len(x.Out) - len(y.Out) })
	want := []ClassAcc{{Rows: 2, Out: []uint32{2}, Hits: []int64{1}}, {Rows: 2, Out: []uint32{1, 2}, Hits: []int64{2, 1}}}
	if !reflect.DeepEqual(classes, want) {
		t.Errorf("classes %+v, want %+v", classes, want)
	}
}

func TestBuildReport(t *testing.T) {
	ok := Stats{InputRows: 10, Rows: 10, RowsWritten: 10, EntriesIn: 40, EntriesOut: 36, Kept: 30, Created: 6,
		Classes: 2, Chunks: 1}
	ok.ClassSize.Add(4)
	ok.ClassSize.Add(6)
	r := BuildReport(ok, 4, matrix.Smooth, nil)
	if !r.Valid || r.Suppressed != 10 || math.Abs(r.Jaccard-30.0/46) > 1e-12 || r.MinClass != 4 || r.ClassSize.Mean != 5 {
		t.Errorf("valid stats: %+v", r)
	}
	bad := []struct {
		edit func(*Stats)
		mode matrix.Mode
		want string
	}{
		{func(s *Stats) { s.SmallClasses = 1 }, matrix.Smooth, "smaller than k"},
		{func(s *Stats) { s.MajorityViolations = 2 }, matrix.Smooth, "majority"},
		{func(s *Stats) {}, matrix.NonSmooth, "created"},
		{func(s *Stats) { s.RowsWritten = 9 }, matrix.Smooth, "9 rows written"},
		{func(s *Stats) { s.Rows = 9 }, matrix.Smooth, "9 rows released"},
		{func(s *Stats) { s.DuplicateUsers = 1 }, matrix.Smooth, "repeated user"},
		{func(s *Stats) { s.HashCollisions = 1 }, matrix.Smooth, "collide"},
	}
	for _, c := range bad {
		s := ok
		c.edit(&s)
		r := BuildReport(s, 4, c.mode, nil)
		if r.Valid || !strings.Contains(strings.Join(r.Problems, "|"), c.want) {
			t.Errorf("want invalid with %q, got valid=%v %q", c.want, r.Valid, r.Problems)
		}
	}
}

func TestMergeStatsOrderFree(t *testing.T) {
	a := Stats{Rows: 1, ShardFiles: []ShardFile{{ID: 3}}, Problems: []string{"b"}, DuplicateIDs: []string{"x", "z"}}
	a.ChunkRows.Add(5)
	b := Stats{Rows: 2, ShardFiles: []ShardFile{{ID: 1}}, Problems: []string{"a"}, DuplicateIDs: []string{"y", "x"}}
	b.ChunkRows.Add(7)
	x, y := mergeStats(a, b), mergeStats(b, a)
	if !reflect.DeepEqual(x, y) || x.Rows != 3 || !reflect.DeepEqual(x.ShardFiles, []ShardFile{{ID: 1}, {ID: 3}}) || !reflect.DeepEqual(x.DuplicateIDs, []string{"x", "y", "z"}) || x.ChunkRows.Min != 5 || x.ChunkRows.Max != 7 {
		t.Errorf("mergeStats not symmetric: %+v vs %+v", x, y)
	}
	var many Stats
	for i := 0; i < MaxProblems+5; i++ {
		many.problem(string(rune('a' + i)))
	}
	if len(many.Problems) != MaxProblems || many.MoreProblems != 5 {
		t.Errorf("%d problems kept, %d more", len(many.Problems), many.MoreProblems)
	}
}

func TestDist(t *testing.T) {
	var a, b Dist
	for _, v := range []int64{2, 4} {
		a.Add(v)
	}
	b.Add(6)
	a.Merge(b)
	a.Merge(Dist{})
	p := a.Proto()
	if p.Count != 3 || p.Sum != 12 || p.Min != 2 || p.Max != 6 || p.Mean != 4 || math.Abs(p.Stddev-math.Sqrt(8.0/3)) > 1e-12 {
		t.Errorf("%+v", p)
	}
}
