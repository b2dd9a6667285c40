package transforms

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/smoothanon/smoothanon/matrix"
)

func TestLayout(t *testing.T) {
	for _, c := range []struct {
		name          string
		p             WriteParams
		rows, entries int64
		want          layout
	}{
		{"small", WriteParams{}, 1000, 20000, layout{1, 1}},
		{"empty", WriteParams{}, 0, 0, layout{1, 1}},
		{"rows bind", WriteParams{}, 1 << 20, 1 << 20, layout{1, 16}},
		{"entries bind", WriteParams{}, 1000, 5 << 21, layout{1, 5}},
		{"automatic shards", WriteParams{}, 3<<20 + 1, 0, layout{4, 13}},
		{"given shards", WriteParams{Shards: 10}, 1 << 20, 0, layout{10, 2}},
		{"tiny runs", WriteParams{Shards: 2, RunRows: 7}, 100, 0, layout{2, 8}},
	} {
		p := c.p
		p.Dir = "d"
		p.Rows, p.MaxEntries = c.rows, c.entries
		if got := newLayout(withWriteDefaults(p)); got != c.want {
			t.Errorf("%s: layout %+v, want %+v", c.name, got, c.want)
		}
	}
	l := layout{Shards: 3, Runs: 5}
	for i := range 200 {
		u := fmt.Sprint("user", i)
		g := l.group(u)
		if shard := int64(userHash(u) % 3); g < 0 || g >= 15 || g/l.Runs != shard {
			t.Fatalf("%s: group %d, shard %d", u, g, shard)
		}
	}
}

// writeBlocks is n random released rows in blocks of up to 100.
func writeBlocks(n int) []any {
	r := rand.New(rand.NewPCG(1, 2))
	var blocks []any
	for lo := 0; lo < n; lo += 100 {
		m := emptyMatrix()
		for i := lo; i < min(n, lo+100); i++ {
			var f []uint32
			for v := uint32(r.IntN(5)); v < 60; v += 1 + uint32(r.IntN(20)) {
				f = append(f, v)
			}
			m.Append(fmt.Sprintf("u%04d", r.IntN(1e6)), f)
		}
		blocks = append(blocks, OutBlock{In: m, Out: m})
	}
	return blocks
}

// runWrite runs Write over blocks and returns the shards' bytes by name.
func runWrite(t *testing.T, blocks []any, params WriteParams) map[string][]byte {
	t.Helper()
	for _, b := range blocks {
		out := b.(OutBlock).Out
		params.Rows += int64(out.NumRows())
		params.MaxEntries += out.NumEntries()
	}
	p, s, col := ptest.Create(blocks)
	Write(s, col, params)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(params.Dir, "*"))
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// TestMergeRunsOrder: merging sorted runs as they are written gives the
// rows gatherShard gives their concatenation, equal user ids (across
// runs and inside one) in run order, then row order; runs may be empty.
func TestMergeRunsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		runs := make([]matrix.Matrix, r.IntN(6))
		for i := range runs {
			m := emptyMatrix()
			for range r.IntN(30) {
				m.Append(fmt.Sprintf("u%02d", r.IntN(40)), []uint32{uint32(i), uint32(r.IntN(1000))})
			}
			runs[i] = *gatherShard(iterSlice([]matrix.Matrix{m}))
		}
		want := gatherShard(iterSlice(runs))
		got := emptyMatrix()
		for u, f := range mergeRuns(runs) {
			got.Append(u, f)
		}
		if !got.Equal(want) {
			t.Fatalf("trial %d: merged %v, want %v", trial, got, want)
		}
	}
}

// TestWriteShardDuplicates: repeated user ids, across runs and inside one,
// an empty id first and more than MaxProblems of them, are counted while
// the merged shard is written as duplicateIDs counts them on the ids, and
// every row is still written.
func TestWriteShardDuplicates(t *testing.T) {
	var runs []matrix.Matrix
	var users []string
	for r := range 3 {
		m := emptyMatrix()
		for i := range 2*MaxProblems + 5 {
			u := fmt.Sprintf("u%03d", i/(r+1))
			if i == 0 {
				u = ""
			}
			m.Append(u, []uint32{uint32(r)})
			users = append(users, u)
		}
		runs = append(runs, *gatherShard(iterSlice([]matrix.Matrix{m})))
	}
	st, err := writeShard(context.Background(), WriteParams{Dir: t.TempDir()}, 0, 1, mergeRuns(runs))
	if err != nil {
		t.Fatal(err)
	}
	n, ids := duplicateIDs(users)
	if n == 0 || len(ids) != MaxProblems {
		t.Fatalf("the test's ids: %d repeats, %d named; want some, %d named", n, len(ids), MaxProblems)
	}
	if st.DuplicateUsers != n || !reflect.DeepEqual(st.DuplicateIDs, ids) || st.RowsWritten != int64(len(users)) {
		t.Errorf("written: %d repeats %q, %d rows; want %d %q, %d rows", st.DuplicateUsers, st.DuplicateIDs, st.RowsWritten, n, ids, len(users))
	}
	if len(st.Problems) != 1 {
		t.Errorf("problems %q, want one line about the repeats", st.Problems)
	}
}

// TestWriteRuns writes the same rows straight and through runs of 7 rows:
// the shards are the same bytes, hold every row once, sorted by user.
func TestWriteRuns(t *testing.T) {
	blocks := writeBlocks(450)
	dir := t.TempDir()
	direct := WriteParams{Dir: filepath.Join(dir, "direct"), Shards: 3}
	viaRuns := WriteParams{Dir: filepath.Join(dir, "runs"), Shards: 3, RunRows: 7}
	for _, p := range []WriteParams{direct, viaRuns} {
		os.Mkdir(p.Dir, 0o755)
	}
	want, got := runWrite(t, blocks, direct), runWrite(t, blocks, viaRuns)
	if len(want) != 3 || len(got) != 3 {
		t.Fatalf("%d and %d shards, want 3", len(want), len(got))
	}
	rows := 0
	for name, b := range want {
		if !bytes.Equal(b, got[name]) {
			t.Errorf("%s differs when written through runs", name)
		}
		m, _, err := matrix.ReadMatrix(filepath.Join(direct.Dir, name), matrix.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < m.NumRows(); i++ {
			if m.Users[i] < m.Users[i-1] {
				t.Fatalf("%s: %s before %s", name, m.Users[i-1], m.Users[i])
			}
		}
		rows += m.NumRows()
	}
	if rows != 450 {
		t.Errorf("%d rows written, want 450", rows)
	}
	if runs, _ := filepath.Glob(filepath.Join(direct.Dir+".runs", "run-*")); len(runs) != 0 {
		t.Errorf("direct write left runs %v", runs)
	}
	if runs, _ := filepath.Glob(filepath.Join(viaRuns.Dir+".runs", "run-*")); len(runs) < 3*10 {
		t.Errorf("%d runs kept, want about 3×22", len(runs))
	}
}

// TestWriteGroupRetry runs the same group twice (a retried bundle), as a
// shard and as a run: the file is rewritten whole, with neither duplicated
// nor lost rows.
func TestWriteGroupRetry(t *testing.T) {
	dir := t.TempDir()
	pieces := []matrix.Matrix{blockOf(testRow{"c", []uint32{3}}), blockOf(testRow{"a", []uint32{1, 2}}, testRow{"b", nil})}
	for _, runRows := range []int64{0, 1} {
		p := withWriteDefaults(WriteParams{Dir: dir, Shards: 2, RunRows: runRows, Rows: 3, MaxEntries: 3})
		fn := &writeGroupFn{Params: p}
		var stats []Stats
		var runs [][2]int64
		for range 2 {
			err := fn.ProcessElement(context.Background(), 1, iterSlice(pieces),
				func(s Stats) { stats = append(stats, s) }, func(s, r int64) { runs = append(runs, [2]int64{s, r}) })
			if err != nil {
				t.Fatal(err)
			}
		}
		var m *matrix.Matrix
		var err error
		if runRows == 0 {
			m, _, err = matrix.ReadMatrix(filepath.Join(dir, ShardName(1, 2)), matrix.ReadOptions{})
		} else {
			// 2 runs of shard 0 and 2 of shard 1: group 1 is shard 0's run 1.
			if !reflect.DeepEqual(runs, [][2]int64{{0, 1}, {0, 1}}) || len(stats) != 0 {
				t.Fatalf("runs %v stats %v, want run (0, 1) twice", runs, stats)
			}
			var run matrix.Matrix
			run, err = readRun(context.Background(), fn.Params.Scratch, 0, 1)
			m = &run
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m.Users, []string{"a", "b", "c"}) || m.NumEntries() != 3 {
			t.Errorf("run rows %d: holds %v (%d entries), want a b c sorted, 3 entries", runRows, m.Users, m.NumEntries())
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(files) != 1 || len(hidden) != 0 {
		t.Errorf("dir holds %v %v, want the one shard", files, hidden)
	}
	empty, err := writeEmptyShards(dir, []ShardFile{{ID: 1}}, 2, nil, matrix.ShapeList, matrix.ValuesIDs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ShardName(0, 2))
	f, err := matrix.OpenFile(path)
	if err != nil {
		t.Fatalf("empty shard: %v", err)
	}
	defer f.Close()
	if f.NumRows() != 0 {
		t.Errorf("empty shard holds %d rows", f.NumRows())
	}
	b, _ := os.ReadFile(path)
	want := ShardFile{ID: 0, Rows: 0, Size: int64(len(b)), CRC32C: crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))}
	if len(empty) != 1 || empty[0] != want {
		t.Errorf("empty shards described as %+v, want [%+v]", empty, want)
	}
}

// TestMergeRuns merges a shard from runs as a retried or repeated input
// may deliver them: a run reported twice is read once; a missing run file
// is an error naming it, and no shard is written.
func TestMergeRuns(t *testing.T) {
	dir := t.TempDir()
	p := withWriteDefaults(WriteParams{Dir: dir, Shards: 1, RunRows: 2, Rows: 4, MaxEntries: 4})
	ctx := context.Background()
	for run, rows := range [][]testRow{{{"b", []uint32{2}}, {"d", nil}}, {{"a", []uint32{1}}, {"c", []uint32{3, 4}}}} {
		m := blockOf(rows...)
		if err := writeRun(ctx, p.Scratch, 0, int64(run), &m); err != nil {
			t.Fatal(err)
		}
	}
	merge := func(runs ...int64) ([]Stats, error) {
		var stats []Stats
		err := (&mergeRunsFn{Params: p}).ProcessElement(ctx, 0, iterSlice(runs), func(s Stats) { stats = append(stats, s) })
		return stats, err
	}
	stats, err := merge(1, 0, 1)
	if err != nil || len(stats) != 1 || stats[0].RowsWritten != 4 {
		t.Fatalf("merge: %v %+v, want 4 rows written", err, stats)
	}
	m, _, err := matrix.ReadMatrix(filepath.Join(dir, ShardName(0, 1)), matrix.ReadOptions{})
	if err != nil || !reflect.DeepEqual(m.Users, []string{"a", "b", "c", "d"}) || m.NumEntries() != 4 {
		t.Fatalf("shard %v (%v), want a b c d with 4 entries", m, err)
	}
	os.Remove(filepath.Join(dir, ShardName(0, 1)))
	if _, err := merge(0, 2); err == nil || !strings.Contains(err.Error(), "run-00000-00002") {
		t.Errorf("missing run: %v, want an error naming run-00000-00002", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("a failed merge left %v", files)
	}
}

// iterSlice iterates over v as a grouped value's iterator does.
func iterSlice[T any](v []T) func(*T) bool {
	i := 0
	return func(x *T) bool {
		if i == len(v) {
			return false
		}
		*x = v[i]
		i++
		return true
	}
}
