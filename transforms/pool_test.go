package transforms

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

func TestEditsAndRaises(t *testing.T) {
	if j := (edits{}).jaccard(); j != 1 {
		t.Errorf("no entries: J %g, want 1", j)
	}
	if j := (edits{In: 10, Kept: 5, Created: 5}).jaccard(); math.Abs(j-1.0/3) > 1e-12 {
		t.Errorf("J %g, want 1/3", j)
	}
	a := edits{In: 10, Kept: 5, Created: 5} // s = 5, c = 5
	cases := []struct {
		name string
		b    edits
		want bool
	}{
		{"fewer suppressed", edits{In: 10, Kept: 6, Created: 5}, true},
		{"fewer created", edits{In: 10, Kept: 5, Created: 4}, true},
		{"both fewer", edits{In: 10, Kept: 9, Created: 0}, true},
		{"the same", a, false},
		{"more suppressed, none created", edits{In: 10, Kept: 4, Created: 0}, false},
		{"fewer suppressed, more changed", edits{In: 10, Kept: 6, Created: 7}, false},
		{"fewer suppressed, as many changed", edits{In: 10, Kept: 6, Created: 6}, false},
	}
	for _, c := range cases {
		if got := raises(a, c.b); got != c.want {
			t.Errorf("%s: raises = %v, want %v", c.name, got, c.want)
		}
		// The claim behind raises: a whole release of any Jaccard in (0, 1]
		// holding these rows gains when raises says so.
		if !c.want {
			continue
		}
		for _, whole := range []edits{{In: 100, Kept: 5, Created: 5}, {In: 100, Kept: 90, Created: 1}, {In: 20, Kept: 20, Created: 0}} {
			after := edits{In: whole.In, Kept: whole.Kept - a.Kept + c.b.Kept, Created: whole.Created - a.Created + c.b.Created}
			if after.jaccard() <= whole.jaccard() {
				t.Errorf("%s: whole %+v J %g -> %g", c.name, whole, whole.jaccard(), after.jaccard())
			}
		}
	}
}

func TestWorstServed(t *testing.T) {
	in := blockOf(testRow{"a", []uint32{1, 2}}, testRow{"b", []uint32{1}}, testRow{"c", []uint32{5}},
		testRow{"d", []uint32{6}}, testRow{"e", nil}, testRow{"f", nil}, testRow{"g", []uint32{7, 8}}, testRow{"h", []uint32{7}})
	out := blockOf(testRow{"a", []uint32{1}}, testRow{"b", []uint32{1}}, testRow{"c", nil},
		testRow{"d", nil}, testRow{"e", nil}, testRow{"f", nil}, testRow{"g", []uint32{7}}, testRow{"h", []uint32{7}})
	// Clusters: 3 = {a, b} J 2/3; 1 = {c, d} J 0; 0 = {e, f} no entries (J 1);
	// 2 = {g, h} J 2/3 (ties with 3: the lower number first).
	cluster := []int32{3, 3, 1, 1, 0, 0, 2, 2}
	cases := []struct {
		share float64
		want  []int
	}{
		{0, nil},
		{0.1, nil}, // every cluster would take the rows past twice the share
		{0.25, []int{2, 3}},
		{0.26, []int{2, 3, 6, 7}},
		{0.5, []int{2, 3, 6, 7}},
		{0.6, []int{0, 1, 2, 3, 6, 7}},
		{1, []int{0, 1, 2, 3, 4, 5, 6, 7}},
	}
	for _, c := range cases {
		if got := worstServed(&in, &out, cluster, c.share); !reflect.DeepEqual(got, c.want) {
			t.Errorf("share %g: rows %v, want %v", c.share, got, c.want)
		}
	}
	// A large worst cluster that would take the rows past twice the share
	// is passed over for the next.
	big := []int32{0, 0, 0, 0, 0, 0, 1, 1}
	in2 := blockOf(testRow{"a", []uint32{1}}, testRow{"b", []uint32{2}}, testRow{"c", []uint32{3}}, testRow{"d", []uint32{4}},
		testRow{"e", []uint32{5}}, testRow{"f", []uint32{6}}, testRow{"g", []uint32{7, 8}}, testRow{"h", []uint32{7}})
	out2 := blockOf(testRow{"a", nil}, testRow{"b", nil}, testRow{"c", nil}, testRow{"d", nil},
		testRow{"e", nil}, testRow{"f", nil}, testRow{"g", []uint32{7}}, testRow{"h", []uint32{7}})
	if got := worstServed(&in2, &out2, big, 0.25); !reflect.DeepEqual(got, []int{6, 7}) {
		t.Errorf("large worst cluster: rows %v, want [6 7]", got)
	}
	if got := worstServed(&in2, &out2, big, 0.4); !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("large worst cluster within twice the share: rows %v", got)
	}
	if got := others(8, []int{2, 3, 6, 7}); !reflect.DeepEqual(got, []int{0, 1, 4, 5}) {
		t.Errorf("others: %v", got)
	}
}

func TestPoolOf(t *testing.T) {
	cases := []struct{ rank, chunks, per, want int64 }{
		{0, 10, 3, 0}, {2, 10, 3, 0}, {3, 10, 3, 1}, {8, 10, 3, 2},
		{9, 10, 3, 2},                               // the tenth chunk joins the third pool, not a pool of its own
		{3, 4, 3, 0}, {9, 11, 3, 3}, {10, 11, 3, 3}, // two left over make a pool
		{0, 1, 3, 0}, {1, 2, 3, 0}, {4, 5, 2, 1}, {3, 6, 2, 1}, {5, 6, 2, 2}, {99, 100, 3, 32}, {98, 100, 3, 32},
	}
	for _, c := range cases {
		if got := poolOf(c.rank, c.chunks, c.per); got != c.want {
			t.Errorf("poolOf(%d, %d, %d) = %d, want %d", c.rank, c.chunks, c.per, got, c.want)
		}
	}
	for share, want := range map[float64]int64{0.4: 3, 0.5: 2, 1.0 / 3: 3, 0.3: 3, 0.2: 5, 0.01: 100} {
		if got := chunksPerPool(share); got != want {
			t.Errorf("chunksPerPool(%g) = %d, want %d", share, got, want)
		}
	}
	for _, s := range []float64{0, 0.01, 0.4, 0.5} {
		if err := CheckPoolShare(s); err != nil {
			t.Errorf("share %g: %v", s, err)
		}
	}
	for _, s := range []float64{-0.1, 0.001, 0.7, 1, math.NaN()} {
		if err := CheckPoolShare(s); err == nil || !strings.Contains(err.Error(), "pool share") {
			t.Errorf("share %g: err %v", s, err)
		}
	}
}

func TestPoolBlockCoder(t *testing.T) {
	in := blockOf(testRow{"a", []uint32{1, 2}}, testRow{"bb", []uint32{1}}, testRow{"c", nil})
	out := blockOf(testRow{"a", []uint32{1}}, testRow{"bb", []uint32{1}}, testRow{"c", []uint32{1}})
	blocks := poolBlocks(7, &in, &out, []int{0, 1, 2})
	if len(blocks) != 1 {
		t.Fatalf("%d blocks", len(blocks))
	}
	b := blocks[0]
	if b.Releases.NumEntries() != 1 || !reflect.DeepEqual(b.Release, []int32{0, 0, 0}) {
		t.Errorf("distinct releases not shared: %+v", b)
	}
	enc := encPoolBlock(b)
	got, err := decPoolBlock(enc)
	if err != nil || got.Chunk != 7 || !got.In.Equal(&b.In) || !reflect.DeepEqual(got.Release, b.Release) ||
		!reflect.DeepEqual(got.Releases.Features, b.Releases.Features) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for n := range enc {
		if _, err := decPoolBlock(enc[:n]); err == nil {
			t.Errorf("truncated to %d of %d bytes: no error", n, len(enc))
		}
	}
	bad := b
	bad.Release = []int32{0, 1, 0}
	if _, err := decPoolBlock(encPoolBlock(bad)); err == nil || !strings.Contains(err.Error(), "release 1 of a block of 1") {
		t.Errorf("bad index: %v", err)
	}
}

// solveChunks solves m's rows dealt round-robin into chunks chunks (so
// that each chunk's solve sees only part of every community) through
// solveFn with pools of share, and returns the kept rows and the set-aside
// pieces.
func solveChunks(t *testing.T, m *matrix.Matrix, chunks int, fn *solveFn) (kept []OutBlock, aside []PoolBlock) {
	t.Helper()
	for c := range chunks {
		var rows []int
		for i := c; i < m.NumRows(); i += chunks {
			rows = append(rows, i)
		}
		iter := iterOf([]ChunkBlock{{Block: KeyedBlock{Rows: pick(m, rows), Seed: 1}, Chunks: int64(chunks)}})
		err := fn.ProcessElement(context.Background(), int64(c), iter, func(o OutBlock) { kept = append(kept, o) },
			func(chunk int64, b PoolBlock) {
				if chunk != int64(c) || b.Chunk != chunk {
					t.Errorf("piece of chunk %d keyed %d", b.Chunk, chunk)
				}
				aside = append(aside, b)
			}, func(ChunkStat) {})
		if err != nil {
			t.Fatal(err)
		}
	}
	return kept, aside
}

// poolTestChunks is a small SBM and a smooth solveFn (k = 4) that sets
// 40% of a chunk aside.
func poolTestChunks(t *testing.T) (*matrix.Matrix, *solveFn) {
	t.Helper()
	m, err := gen.SBM(gen.SBMParams{N: 300, S: 30, Q: 0.5, P: 0.01, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	fn := &solveFn{Solver: solver.Params{K: 4, Mode: matrix.Smooth, Seed: 3, Workers: 1}, PoolShare: 0.4}
	return m, fn
}

// TestOneChunkSetsNothingAside: in a job of one chunk no row is set aside
// (a pool of one chunk is never solved again), whatever the share; the
// chunk's release is the whole solve's.
func TestOneChunkSetsNothingAside(t *testing.T) {
	m, fn := poolTestChunks(t)
	kept, aside := solveChunks(t, m, 1, fn)
	if len(aside) != 0 {
		t.Fatalf("%d pieces set aside in a job of one chunk", len(aside))
	}
	in, out := joined(kept)
	if in.NumRows() != m.NumRows() {
		t.Fatalf("%d rows released, want %d", in.NumRows(), m.NumRows())
	}
	if _, aside := solveChunks(t, m, 2, fn); len(aside) == 0 {
		t.Fatal("nothing set aside in a job of two chunks: the test shows nothing")
	}
	rep, err := verify.Check(in, out, verify.Params{K: 4, Mode: matrix.Smooth})
	if err != nil || !rep.Valid {
		t.Fatalf("release: %v %v", err, rep.GetProblems())
	}
}

func iterOf[T any](xs []T) func(*T) bool {
	i := 0
	return func(x *T) bool {
		if i == len(xs) {
			return false
		}
		*x = xs[i]
		i++
		return true
	}
}

// joined joins blocks into one (input, release) pair sorted by user.
func joined(blocks []OutBlock) (in, out *matrix.Matrix) {
	in, out = matrix.New(0, 0), matrix.New(0, 0)
	for _, b := range blocks {
		for i := range b.In.Users {
			in.Append(b.In.Users[i], b.In.Row(i))
			out.Append(b.Out.Users[i], b.Out.Row(i))
		}
	}
	return in.SortedByUser(), out.SortedByUser()
}

// TestSolveAndPool solves an SBM in three chunks of mixed communities,
// pools the worst-served 40% of each, and checks that the pool's release
// replaces the first, raises the Jaccard, keeps every user once and
// verifies, in both modes; and that the order of the pieces does not
// change the pool's release.
func TestSolveAndPool(t *testing.T) {
	m, err := gen.SBM(gen.SBMParams{N: 900, S: 30, Q: 0.5, P: 0.01, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []matrix.Mode{matrix.Smooth, matrix.NonSmooth} {
		t.Run(mode.String(), func(t *testing.T) {
			fn := &solveFn{Solver: solver.Params{K: 4, Mode: mode, Seed: 3, Workers: 1}, PoolShare: 0.4}
			kept, aside := solveChunks(t, m, 3, fn)
			firstIn, firstOut := joined(append(slices.Clone(kept), outBlocks(aside)...))
			before, err := verify.Check(firstIn, firstOut, verify.Params{K: 4, Mode: mode})
			if err != nil || !before.Valid {
				t.Fatalf("first release: %v %v", err, before.GetProblems())
			}

			var pooled []OutBlock
			var st PoolStat
			pf := &poolFn{*fn}
			if err := pf.ProcessElement(context.Background(), 0, iterOf(aside), func(o OutBlock) { pooled = append(pooled, o) },
				func(s PoolStat) { st = s }); err != nil {
				t.Fatal(err)
			}
			if !st.Improved || st.Chunks != 3 || st.Rows < int64(0.4*float64(m.NumRows())) {
				t.Fatalf("pool stat %+v", st)
			}
			in, out := joined(append(slices.Clone(kept), pooled...))
			rep, err := verify.Check(in, out, verify.Params{K: 4, Mode: mode})
			if err != nil || !rep.Valid || rep.Rows != int64(m.NumRows()) {
				t.Fatalf("pooled release: %v valid=%v rows=%d %v", err, rep.GetValid(), rep.GetRows(), rep.GetProblems())
			}
			if rep.Jaccard <= before.Jaccard {
				t.Errorf("Jaccard %.4f after the pool, %.4f before", rep.Jaccard, before.Jaccard)
			}
			gain := st.After.jaccard() - st.Before.jaccard()
			t.Logf("%s: J %.4f -> %.4f; pool of %d rows %.4f -> %.4f", mode, before.Jaccard, rep.Jaccard, st.Rows, st.Before.jaccard(), st.After.jaccard())
			if gain <= 0 {
				t.Errorf("pool's own Jaccard gain %g", gain)
			}

			// The pieces in another order give the same bytes.
			shuffled := slices.Clone(aside)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			var again []OutBlock
			if err := pf.ProcessElement(context.Background(), 0, iterOf(shuffled), func(o OutBlock) { again = append(again, o) },
				func(PoolStat) {}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(encodeAll(pooled), encodeAll(again)) {
				t.Error("the order of a pool's pieces changed its release")
			}
		})
	}
}

// outBlocks turns set-aside pieces back into their first release.
func outBlocks(pieces []PoolBlock) []OutBlock {
	var out []OutBlock
	for _, p := range pieces {
		rel := matrix.New(0, 0)
		for i, u := range p.In.Users {
			rel.Append(u, p.Releases.Row(int(p.Release[i])))
		}
		out = append(out, OutBlock{In: p.In, Out: *rel})
	}
	return out
}

func encodeAll(blocks []OutBlock) []byte {
	var b []byte
	for _, o := range blocks {
		b = append(b, encOutBlock(o)...)
	}
	return b
}

// TestPoolKeepsFirst: a pool of one chunk, or one naming a user twice, is
// not solved again, and a new release that would not raise the Jaccard is
// not kept.
func TestPoolKeepsFirst(t *testing.T) {
	m, fn := poolTestChunks(t)
	_, aside := solveChunks(t, m, 2, fn)
	pf := &poolFn{*fn}
	run := func(pieces []PoolBlock) (PoolStat, []OutBlock) {
		var st PoolStat
		var out []OutBlock
		if err := pf.ProcessElement(context.Background(), 0, iterOf(pieces), func(o OutBlock) { out = append(out, o) },
			func(s PoolStat) { st = s }); err != nil {
			t.Fatal(err)
		}
		return st, out
	}
	var one []PoolBlock
	for _, p := range aside {
		if p.Chunk == 0 {
			one = append(one, p)
		}
	}
	if st, out := run(one); st.Improved || st.Chunks != 1 || st.Seconds != 0 || st.Before != st.After {
		t.Errorf("one-chunk pool solved: %+v", st)
	} else if in, rel := joined(out); !bytes.Equal(encodeAll([]OutBlock{{In: *in, Out: *rel}}), encodeAll(sortedOut(outBlocks(one)))) {
		t.Error("one-chunk pool changed its release")
	}
	twice := append(slices.Clone(aside), aside[0])
	twice[len(twice)-1].Chunk = 9
	if st, _ := run(twice); st.Improved || st.Seconds != 0 {
		t.Errorf("pool naming a user twice solved: %+v", st)
	}
	// A pool whose first release changes nothing (it is the input) cannot
	// be raised: its new release is dropped and the first one emitted.
	var exact []PoolBlock
	for _, p := range aside {
		q := p
		q.Releases, q.Release = p.In, seqInt32(p.In.NumRows())
		exact = append(exact, q)
	}
	st, out := run(exact)
	if st.Improved || st.Seconds == 0 || st.After != st.Before || st.Before.Kept != st.Before.In || st.Before.Created != 0 {
		t.Errorf("a release equal to the input was replaced, or not solved again: %+v", st)
	}
	for _, o := range out {
		if !o.In.Equal(&o.Out) {
			t.Fatal("a pool that did not raise emitted another release")
		}
	}
}

func seqInt32(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

// TestPoolKey ranks chunks by id, with the gaps merged chunks leave, and
// names a chunk it has no stat for.
func TestPoolKey(t *testing.T) {
	stats := []ChunkStat{{Chunk: 9}, {Chunk: 0}, {Chunk: 4}, {Chunk: 2}, {Chunk: 7}}
	fn := &poolKeyFn{PerPool: 2}
	got := map[int64]int64{}
	for _, c := range []int64{0, 2, 4, 7, 9} {
		if err := fn.ProcessElement(c, PoolBlock{Chunk: c}, iterOf(stats), func(p int64, b PoolBlock) { got[b.Chunk] = p }); err != nil {
			t.Fatal(err)
		}
	}
	// Ranks 0..4 in pools of 2; the lone fifth joins the second pool.
	if want := map[int64]int64{0: 0, 2: 0, 4: 1, 7: 1, 9: 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("pools %v, want %v", got, want)
	}
	if err := (&poolKeyFn{PerPool: 2}).ProcessElement(5, PoolBlock{}, iterOf(stats), func(int64, PoolBlock) {}); err == nil ||
		!strings.Contains(err.Error(), "chunk 5 was not solved") {
		t.Errorf("unknown chunk: %v", err)
	}
}

// TestPoolBlocksSplit cuts set-aside rows into several blocks and gathers
// them again, in another order, into the rows sorted by user.
func TestPoolBlocksSplit(t *testing.T) {
	n := MaxBlockRows*2 + 100
	in, out := matrix.New(n, 0), matrix.New(n, 0)
	for i := range n {
		u := string(rune('a'+i%26)) + strings.Repeat("x", i%7) + string(rune('A'+i/26%26)) + string(rune('0'+i/676))
		in.Append(u, []uint32{uint32(i % 5), uint32(5 + i%3)})
		out.Append(u, []uint32{uint32(i % 5 / 2)})
	}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	blocks := poolBlocks(3, in, out, seq(n))
	if len(blocks) != 3 {
		t.Fatalf("%d blocks for %d rows", len(blocks), n)
	}
	for _, b := range blocks {
		if d := len(b.Releases.Offsets) - 1; d != 3 {
			t.Errorf("block of %d rows stores %d distinct releases, want 3", b.In.NumRows(), d)
		}
	}
	slices.Reverse(blocks)
	gin, gfirst, chunks := gatherPool(iterOf(blocks))
	sin, sout := in.SortedByUser(), out.SortedByUser()
	if chunks != 1 || !gin.Equal(sin) || !gfirst.Equal(sout) {
		t.Errorf("gathered pool differs from its rows (%d chunks)", chunks)
	}
}

func sortedOut(blocks []OutBlock) []OutBlock {
	in, out := joined(blocks)
	return []OutBlock{{In: *in, Out: *out}}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestBuildReportPool(t *testing.T) {
	st := Stats{InputRows: 10, Rows: 10, RowsWritten: 10, EntriesIn: 40, EntriesOut: 36, Kept: 30, Created: 6,
		Pools: 2, PoolsImproved: 1, PoolRows: 4, PoolSeconds: 1.5, PoolKeptGain: 2, PoolCreatedGain: -1}
	st.ClassSize.Add(10)
	r := BuildReport(st, 4, matrix.Smooth, nil)
	p := r.GetPipeline().GetPool()
	if p == nil || p.Rows != 4 || p.Pools != 2 || p.Improved != 1 || p.Seconds != 1.5 || math.Abs(p.JaccardBefore-28.0/47) > 1e-12 {
		t.Errorf("pool info %+v", p)
	}
	st.Pools = 0
	if BuildReport(st, 4, matrix.Smooth, nil).GetPipeline().GetPool() != nil {
		t.Error("pool info without pools")
	}
}
