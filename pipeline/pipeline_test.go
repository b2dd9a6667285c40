package pipeline

import (
	"bytes"
	"context"
	"errors"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/transforms"
	"github.com/smoothanon/smoothanon/verify"
)

// writeInput writes an SBM matrix as three Parquet files with small row
// groups (so reading splits into many elements) and returns the matrix and
// the file paths.
func writeInput(t testing.TB, dir string, p gen.SBMParams) (*matrix.Matrix, []string) {
	t.Helper()
	m, err := gen.SBM(p)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	n := m.NumRows()
	for part, lo := 0, 0; lo < n; part++ {
		hi := min(n, lo+n/3+1)
		sub := matrix.New(hi-lo, 0)
		for i := lo; i < hi; i++ {
			sub.Append(m.Users[i], m.Row(i))
		}
		path := filepath.Join(dir, "in-"+string(rune('a'+part))+".parquet")
		if err := matrix.WriteMatrix(path, sub, matrix.WriterOptions{RowGroupRows: 100}); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
		lo = hi
	}
	return m, files
}

// readRelease reads every shard of dir, checking names and per-shard order.
func readRelease(t testing.TB, dir string) (*matrix.Matrix, map[string][]byte) {
	t.Helper()
	m, err := storage.ReadManifest(context.Background(), dir)
	if err != nil {
		t.Fatalf("release without its manifest: %v", err)
	}
	bytesOf := map[string][]byte{}
	out := matrix.New(0, 0)
	for i, s := range m.Shards {
		base := release.StagedName(s.Name)
		if want := transforms.ShardName(int64(i), int64(len(m.Shards))); base != want {
			t.Fatalf("release file %d is %s, want %s", i, s.Name, want)
		}
		path := storage.Join(dir, s.Name)
		b, err := storage.ReadFile(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		bytesOf[base] = b
		shard := readShard(t, path)
		if !sort.StringsAreSorted(shard.Users) {
			t.Fatalf("%s: rows not sorted by user id", base)
		}
		for r := range shard.Users {
			out.Append(shard.Users[r], shard.Row(r))
		}
	}
	if entries, _ := storage.ListTree(context.Background(), dir); len(entries) != len(m.Shards)+1 {
		t.Fatalf("release %s holds %q: want its shards and _SUCCESS", dir, entries)
	}
	return out, bytesOf
}

// readShard reads every row of one release file.
func readShard(t testing.TB, path string) *matrix.Matrix {
	t.Helper()
	f, err := matrix.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := matrix.New(0, 0)
	if err := f.ReadAll(func(u string, feats []uint32) error { m.Append(u, feats); return nil }); err != nil {
		t.Fatal(err)
	}
	return m
}

func runOK(t *testing.T, p Params) *Result {
	t.Helper()
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Report.Valid {
		t.Fatalf("report invalid: %v", res.Report.Problems)
	}
	return res
}

// TestOneChunkNoPool: a job of one chunk sets no row aside for pools (a
// pool of one chunk is never solved again), and its report says so.
func TestOneChunkNoPool(t *testing.T) {
	dir := t.TempDir()
	in, files := writeInput(t, dir, gen.SBMParams{N: 300, S: 30, Q: 0.5, P: 0.01, Seed: 2})
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "out"),
		Solver: solver.Params{K: 5, Seed: 7}, ChunkSize: 1000, PoolShare: DefaultPoolShare}
	rep := runOK(t, p).Report
	if rep.Pipeline.Chunks != 1 || rep.Rows != int64(in.NumRows()) {
		t.Fatalf("%d chunks, %d rows: want 1 chunk of %d", rep.Pipeline.Chunks, rep.Rows, in.NumRows())
	}
	if pl := rep.Pipeline.GetPool(); pl.GetRows() != 0 || pl.GetPools() != 0 {
		t.Errorf("pools in a job of one chunk: %v", pl)
	}
}

func TestRunPrismVerifiesAndIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	in, files := writeInput(t, dir, gen.SBMParams{N: 1200, S: 40, Q: 0.5, P: 0.005, Seed: 3})
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "out1"),
		Solver: solver.Params{K: 5, Seed: 7}, ChunkSize: 300, Shards: 3, PoolShare: DefaultPoolShare}
	res := runOK(t, p)
	rep := res.Report
	if pl := rep.Pipeline.GetPool(); pl.GetPools() < 1 || pl.GetRows() < int64(0.4*float64(in.NumRows())) || rep.Jaccard < pl.GetJaccardBefore() {
		t.Errorf("pools: %v, J %.4f", pl, rep.Jaccard)
	}
	if got := res.Counters["smoothanon/entries_out"]; got != rep.EntriesOut {
		t.Errorf("entries_out counter %d, report %d", got, rep.EntriesOut)
	}
	if rep.Rows != int64(in.NumRows()) || rep.EntriesIn != in.NumEntries() {
		t.Errorf("report rows %d entries %d, want %d %d", rep.Rows, rep.EntriesIn, in.NumRows(), in.NumEntries())
	}
	if c := rep.Pipeline.Chunks; c < 3 || c > 5 {
		t.Errorf("%d chunks for 1200 rows at chunk size 300, want 3..5", c)
	}
	if rep.Pipeline.ChunkRows.Min < 10 {
		t.Errorf("chunk of %d rows < 2k", rep.Pipeline.ChunkRows.Min)
	}
	if rep.Jaccard <= 0.2 {
		t.Errorf("Jaccard %.3f suspiciously low", rep.Jaccard)
	}
	out1, bytes1 := readRelease(t, p.Output)
	if len(bytes1) != 3 {
		t.Fatalf("%d shards, want 3", len(bytes1))
	}
	chk, err := verify.Check(in, out1, verify.Params{K: 5, Mode: matrix.Smooth})
	if err != nil {
		t.Fatal(err)
	}
	if !chk.Valid {
		t.Fatalf("verify.Check on the release: %v", chk.Problems)
	}
	if chk.Jaccard != rep.Jaccard || chk.Classes != rep.Classes || chk.Created != rep.Created {
		t.Errorf("pipeline report (J %.4f, %d classes, %d created) differs from verify.Check (J %.4f, %d classes, %d created)",
			rep.Jaccard, rep.Classes, rep.Created, chk.Jaccard, chk.Classes, chk.Created)
	}
	if res.Counters["smoothanon/rows_read"] != int64(in.NumRows()) {
		t.Errorf("rows_read counter %d, want %d (all counters %v)", res.Counters["smoothanon/rows_read"], in.NumRows(), res.Counters)
	}

	// Same input listed in another order, as a directory: identical bytes.
	rev := slices.Clone(files)
	slices.Reverse(rev)
	p2 := p
	p2.Input = strings.Join(rev, ",")
	p2.Output = filepath.Join(dir, "out2")
	runOK(t, p2)
	_, bytes2 := readRelease(t, p2.Output)
	for name, b := range bytes1 {
		if !bytes.Equal(b, bytes2[name]) {
			t.Errorf("%s differs between runs with the input files in another order", name)
		}
	}

	// An existing non-empty output is refused, and kept.
	_, err = Run(context.Background(), p)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "holds the release of run") {
		t.Fatalf("rerun into a non-empty output: err %v, want an InputError about it", err)
	}
	// ... unless Overwrite.
	p.Overwrite = true
	runOK(t, p)
	_, bytes3 := readRelease(t, p.Output)
	for name, b := range bytes1 {
		if !bytes.Equal(b, bytes3[name]) {
			t.Errorf("%s differs after --overwrite rerun", name)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".out*"))
	if len(leftovers) > 0 {
		t.Errorf("staging left behind: %v", leftovers)
	}
}

// TestRunKeys chunks by every leading key: still valid, balanced, and
// deterministic across input file order.
func TestRunKeys(t *testing.T) {
	for _, key := range []transforms.Key{transforms.KeySpectral, transforms.KeyHub, transforms.KeyTwoHop, transforms.KeyMinHash} {
		t.Run(key.String(), func(t *testing.T) {
			dir := t.TempDir()
			in, files := writeInput(t, dir, gen.SBMParams{N: 800, S: 40, Q: 0.4, P: 0.01, Seed: 8})
			p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "a"),
				Solver: solver.Params{K: 4, Seed: 2}, ChunkSize: 200, Key: key, Shards: 2}
			res := runOK(t, p)
			if got := res.Report.Pipeline.ChunkKey; got != key.String() {
				t.Errorf("report chunk key %q, want %q", got, key)
			}
			// The spectral key cuts at gaps: chunks of half to one and a
			// half ChunkSize, give or take the sampling.
			lo, hi := int64(120), int64(280)
			if key == transforms.KeySpectral {
				lo, hi = 80, 320
			}
			if cr := res.Report.Pipeline.ChunkRows; cr.Count != 4 || cr.Min < lo || cr.Max > hi {
				t.Errorf("chunk rows %+v, want 4 chunks of %d..%d", cr, lo, hi)
			}
			out, a := readRelease(t, p.Output)
			if chk, err := verify.Check(in, out, verify.Params{K: 4}); err != nil || !chk.Valid {
				t.Fatalf("verify.Check: %v %v", err, chk.GetProblems())
			}
			rev := slices.Clone(files)
			slices.Reverse(rev)
			p.Input, p.Output = strings.Join(rev, ","), filepath.Join(dir, "b")
			runOK(t, p)
			_, b := readRelease(t, p.Output)
			for name := range a {
				if !bytes.Equal(a[name], b[name]) {
					t.Errorf("%s differs with the input files in another order", name)
				}
			}
		})
	}
}

// TestTwoHopChunksBalanced: on a sparse input with a thin boundary sample
// (rate 128/13000), the sample must not be biased towards small two-hop
// keys (a row's own user is in its two-hop neighbourhood), or the chunks
// come out wildly unequal.
func TestTwoHopChunksBalanced(t *testing.T) {
	if testing.Short() {
		t.Skip("39,000-row run")
	}
	dir := t.TempDir()
	_, files := writeInput(t, dir, gen.SBMParams{N: 39000, S: 10, Q: 0.3, P: 0.00002, Seed: 1})
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "out"),
		Solver: solver.Params{K: 4, Seed: 1, Restarts: 1}, ChunkSize: 13000,
		Key: transforms.KeyTwoHop}
	res := runOK(t, p)
	if cr := res.Report.Pipeline.ChunkRows; cr.Count != 3 || cr.Min < 10000 || cr.Max > 16000 {
		t.Errorf("chunk rows %+v, want 3 chunks of 13000±3000", cr)
	}
}

func TestMaxEntriesOut(t *testing.T) {
	if got := maxEntriesOut(10, matrix.Smooth); got != 20 {
		t.Errorf("smooth: %d, want 20 (a created entry needs a held one of its class)", got)
	}
	if got := maxEntriesOut(10, matrix.NonSmooth); got != 10 {
		t.Errorf("non-smooth: %d, want 10 (nothing is created)", got)
	}
}

// TestLargeKKeepsItsChunks: chunks are merged when they hold fewer than
// 2k sampled rows, so at a large k the sample must be dense enough that a
// chunk of ChunkSize rows is never merged (here 2k = 140 is more than
// DefaultSamplesPerChunk; 3 chunks of 2,000 rows, 8% of them sampled).
func TestLargeKKeepsItsChunks(t *testing.T) {
	dir := t.TempDir()
	_, files := writeInput(t, dir, gen.SBMParams{N: 6000, S: 20, Q: 0.3, P: 0.001, Seed: 5})
	p := Params{Input: strings.Join(files, ","), Output: filepath.Join(dir, "out"), Solver: solver.Params{K: 70, Seed: 1}, ChunkSize: 2000,
		Key: transforms.KeyHub}
	if cr := runOK(t, p).Report.Pipeline.ChunkRows; cr.Count != 3 || cr.Min < 1500 || cr.Max > 2500 {
		t.Errorf("chunk rows %+v, want 3 chunks of 2000±500", cr)
	}
}

func TestRunNonSmooth(t *testing.T) {
	dir := t.TempDir()
	in, files := writeInput(t, dir, gen.SBMParams{N: 600, S: 30, Q: 0.5, P: 0.01, Seed: 4})
	p := Params{Input: filepath.Join(dir, "*.parquet"), Output: filepath.Join(dir, "out"),
		Solver: solver.Params{K: 4, Mode: matrix.NonSmooth, Seed: 1}, ChunkSize: 200}
	res := runOK(t, p)
	if res.Report.Created != 0 {
		t.Errorf("nonsmooth release created %d entries", res.Report.Created)
	}
	out, _ := readRelease(t, p.Output)
	chk, err := verify.Check(in, out, verify.Params{K: 4, Mode: matrix.NonSmooth})
	if err != nil || !chk.Valid {
		t.Fatalf("verify.Check: %v %v", err, chk.GetProblems())
	}
	_ = files
}

func TestRunInputErrors(t *testing.T) {
	dir := t.TempDir()
	_, files := writeInput(t, dir, gen.SBMParams{N: 6, S: 3, Q: 1, P: 0, Seed: 1})
	cases := []struct {
		name string
		p    Params
		want string
	}{
		{"too few rows", Params{Input: files[0], Output: filepath.Join(dir, "o1"), Solver: solver.Params{K: 5}}, "fewer than k=5"},
		{"no files", Params{Input: filepath.Join(dir, "nope*.parquet"), Output: filepath.Join(dir, "o2"),
			Solver: solver.Params{K: 2}}, "no such file"},
		{"bad params", Params{Input: files[0], Output: filepath.Join(dir, "o3"),
			Solver: solver.Params{K: 4}, ChunkSize: 7}, "chunk size 7"},
	}
	for _, c := range cases {
		_, err := Run(context.Background(), c.p)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want InputError containing %q", c.name, err, c.want)
		}
	}
}

func TestCheckParams(t *testing.T) {
	ok := Params{Input: "x", Output: "y", Solver: solver.Params{K: 4}}
	cases := []struct {
		name string
		edit func(*Params)
		want string // "" = valid
	}{
		{"ok", func(*Params) {}, ""},
		{"no input", func(p *Params) { p.Input = "" }, "no input"},
		{"no output", func(p *Params) { p.Output = "" }, "no output"},
		{"k", func(p *Params) { p.Solver.K = 1 }, "k = 1"},
		{"mode", func(p *Params) { p.Solver.Mode = 5 }, "invalid mode 5"},
		{"start", func(p *Params) { p.Solver.Start, p.Solver.Variant = solver.StartMondrian, solver.Paper }, "start mondrian needs variant improved"},
		{"pool share", func(p *Params) { p.PoolShare = 0.7 }, "pool share 0.7"},
		{"chunk", func(p *Params) { p.ChunkSize = 7 }, "chunk size 7"},
		{"shards", func(p *Params) { p.Shards = -1 }, "shards -1"},
		{"workers", func(p *Params) { p.Solver.Workers = -2 }, "workers = -2"},
		{"search", func(p *Params) { p.Solver.Search = 3 }, "invalid search 3"},
		{"runner", func(p *Params) { p.Runner = "spork" }, `"spork"`},
		{"flink without an endpoint", func(p *Params) { p.Runner = "flink" }, "--endpoint host:port"},
		{"flink at an endpoint", func(p *Params) { p.Runner, p.Endpoint = "flink", "localhost:8099" }, ""},
		{"key", func(p *Params) { p.Key = 7 }, "invalid chunk key 7"},
		{"iterations", func(p *Params) { p.SpectralIterations = -1 }, "spectral iterations -1"},
	}
	for _, c := range cases {
		p := ok
		c.edit(&p)
		err := CheckParams(p)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// TestRunKeyAuto: KeyAuto chunks generated user lists by the hub key and a
// block model by the spectral key, AutoStart solves the lists' chunks from
// the Mondrian partition only (no facility cost) and the block model's
// from both, and the report says which and why.
func TestRunKeyAuto(t *testing.T) {
	ul, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 3000, Columns: 1e5, MeanDegree: 10, Zipf: 1.1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := gen.SBM(gen.SBMParams{N: 2000, S: 20, Q: 0.5, P: 0.002, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		m     *matrix.Matrix
		want  transforms.Key
		start solver.Start
	}{
		{"user lists", ul, transforms.KeyHub, solver.StartMondrian},
		{"block model", blocks, transforms.KeySpectral, solver.StartBoth},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := Params{Input: writeParts(t, dir, c.m, 2), Output: filepath.Join(dir, "out"),
				Solver: solver.Params{K: 4, Seed: 1}, ChunkSize: 1000, Key: transforms.KeyAuto, AutoStart: true}
			res := runOK(t, p)
			auto := res.Report.Pipeline.ChunkKeyAuto
			if got := res.Report.Pipeline.ChunkKey; got != c.want.String() || auto == nil || auto.SampleRows < 1000 {
				t.Fatalf("report chunk key %q, auto %v; want %q with its evidence", got, auto, c.want)
			}
			if got, fc := res.Report.Solve.GetStart(), res.Report.Solve.GetFacilityCost(); got != c.start.String() || (fc == 0) != (c.start == solver.StartMondrian) {
				t.Errorf("report start %q, facility cost %v; want start %q", got, fc, c.start)
			}
			out, _ := readRelease(t, p.Output)
			if chk, err := verify.Check(c.m, out, verify.Params{K: 4}); err != nil || !chk.Valid {
				t.Fatalf("verify.Check: %v %v", err, chk.GetProblems())
			}
		})
	}
	// A key given explicitly is used as it is, with no evidence.
	dir := t.TempDir()
	p := Params{Input: writeParts(t, dir, ul, 1), Output: filepath.Join(dir, "out"),
		Solver: solver.Params{K: 4, Seed: 1}, ChunkSize: 1000, Key: transforms.KeyMinHash}
	if res := runOK(t, p); res.Report.Pipeline.ChunkKey != "minhash" || res.Report.Pipeline.ChunkKeyAuto != nil || res.Report.Solve.GetStart() != "both" {
		t.Errorf("explicit key: report %q, auto %v, start %q", res.Report.Pipeline.ChunkKey, res.Report.Pipeline.ChunkKeyAuto, res.Report.Solve.GetStart())
	}
	// AutoStart alone samples too; the paper's variant always starts
	// from Meyerson, so it reads no sample.
	for _, v := range []solver.Variant{solver.Improved, solver.Paper} {
		p.AutoStart, p.Solver.Variant, p.Overwrite = true, v, true
		want := map[solver.Variant]string{solver.Improved: "mondrian", solver.Paper: "both"}[v]
		res := runOK(t, p)
		if res.Report.Pipeline.ChunkKey != "minhash" || (res.Report.Pipeline.ChunkKeyAuto == nil) != (v == solver.Paper) || res.Report.Solve.GetStart() != want {
			t.Errorf("auto start, %s: report key %q, auto %v, start %q; want start %q", v, res.Report.Pipeline.ChunkKey,
				res.Report.Pipeline.ChunkKeyAuto, res.Report.Solve.GetStart(), want)
		}
	}
}

// TestCheckRunner: the runners a job service runs need its address, from
// the parameter or Beam's --endpoint; the others need none.
func TestCheckRunner(t *testing.T) {
	defer func(ep string) { *jobopts.Endpoint = ep }(*jobopts.Endpoint)
	for _, c := range []struct {
		runner, endpoint, flag string
		want                   string // "" = valid
	}{
		{"", "", "", ""},
		{"prism", "", "", ""},
		{"direct", "", "", ""},
		{"dataflow", "", "", ""},
		{"flink", "", "", "runner flink submits to a job service"},
		{"universal", "", "", "runner universal submits"},
		{"spark", "", "", "runner spark submits"},
		{"flink", "localhost:8099", "", ""},
		{"flink", "", "localhost:8099", ""},
		{"spork", "", "", `unknown runner "spork"`},
	} {
		*jobopts.Endpoint = c.flag
		err := CheckRunner(c.runner, c.endpoint)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckRunner(%q, %q) with --endpoint %q = %v, want %q", c.runner, c.endpoint, c.flag, err, c.want)
		}
	}
}
