package transforms

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/parquet-go/parquet-go"

	"github.com/smoothanon/smoothanon/matrix"
)

// TestBuildVocab: integer names of any magnitude, shuffled over three
// files of many row groups, get the ranks of their values as ids, and
// GroupPairs and Read through the vocabulary give the rows of the same
// users numbered by rank; the vocabulary file holds the sorted names.
func TestBuildVocab(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	m := testUsers(300, rng)
	// Name feature f by a large, order-preserving integer: ranks are then
	// the ids the distinct features have among themselves.
	name := func(f uint32) int64 { return int64(f)*1_000_003 - 1<<40 }
	held := map[uint32]bool{}
	for _, f := range m.Features {
		held[f] = true
	}
	var keys [][]byte
	for f := range held {
		keys = append(keys, matrix.IntNameKey(nil, name(f)))
	}
	sorted, err := matrix.SortedVocab(matrix.ValuesIntegers, keys)
	if err != nil {
		t.Fatal(err)
	}
	ranked := matrix.New(0, 0)
	for i, u := range m.Users {
		var ids []uint32
		for _, f := range m.Row(i) {
			id, _ := sorted.Lookup(matrix.IntNameKey(nil, name(f)))
			ids = append(ids, id)
		}
		ranked.Append(u, ids) // ranks keep the features' order
	}
	pairs := longPairs(m, rng)
	for i := range pairs {
		pairs[i].Feature = name(uint32(pairs[i].Feature))
	}
	long := writeLongFiles(t, dir, pairs, 3, 4000)
	list := filepath.Join(dir, "list.parquet")
	if err := matrix.WriteMatrix(list, ranked, matrix.WriterOptions{Vocab: sorted}); err != nil {
		t.Fatal(err)
	}

	named := longLayout
	named.Values = matrix.ValuesIntegers
	listLayout := matrix.Layout{Shape: matrix.ShapeList, User: matrix.ColUserID, Feature: matrix.ColFeatures, Values: matrix.ValuesIntegers}
	p, s := beam.NewPipelineWithRoot()
	path := filepath.Join(dir, "vocab.bin")
	vocab := BuildVocab(s, long, VocabParams{Layout: named, Path: path})
	grouped := GroupPairs(s, long, GroupParams{Layout: named, Vocab: vocab})
	listPath := filepath.Join(dir, "list-vocab.bin")
	read := Read(s, []string{list}, ReadParams{Layout: listLayout, Vocab: BuildVocab(s.Scope("list"), []string{list}, VocabParams{Layout: listLayout, Path: listPath})})
	var want []any
	for i, u := range ranked.Users {
		want = append(want, describeRow(u, ranked.Row(i)))
	}
	passert.Equals(s, beam.ParDo(s, describeRows, grouped), want...)
	passert.Equals(s, beam.ParDo(s.Scope("read"), describeRows, read), want...)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, listPath} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := matrix.ReadVocab(f)
		f.Close()
		if err != nil || got.Fingerprint() != sorted.Fingerprint() {
			t.Errorf("%s: %d names (%v), want the %d sorted names", p, got.Len(), err, sorted.Len())
		}
	}
}

// TestBuildVocabRefused: a string interest that is not UTF-8 fails the
// job with one line naming file, row and column, without the value.
func TestBuildVocabRefused(t *testing.T) {
	type raw struct {
		UserID  string `parquet:"user_id"`
		Feature []byte `parquet:"feature"`
	}
	path := filepath.Join(t.TempDir(), "bad.parquet")
	writeRows(t, path, []raw{{"a", []byte("/ok")}, {"b", []byte{0xc3}}})
	l := longLayout
	l.Values = matrix.ValuesStrings
	p, s := beam.NewPipelineWithRoot()
	BuildVocab(s, []string{path}, VocabParams{Layout: l, Path: filepath.Join(t.TempDir(), "v")})
	line, ok := JobInputError(ptest.Run(p))
	if want := path + ": row 1: column feature: feature not valid UTF-8"; !ok || line != want {
		t.Errorf("input error %q (%v), want %q", line, ok, want)
	}
}

// describeRow is describeRows's line for one row.
func describeRow(u string, f []uint32) string { return fmt.Sprintf("%s %v", u, f) }

// writeRows writes rows to a Parquet file at path.
func writeRows[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
}

// TestReadNamesBundle: a bundle of row groups that share their names
// sends each distinct name once, in sorted batches of one shard each,
// however many row groups hold it: a runner that does not lift the
// combine then shuffles names per bundle, not per row group.
func TestReadNamesBundle(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := testUsers(400, rng)
	files := writeLongFiles(t, t.TempDir(), longPairs(m, rng), 2, 300)
	fn := &readNamesFn{Layout: longLayout, Shards: 16}
	fn.Layout.Values = matrix.ValuesIntegers
	groups := 0
	for _, file := range files {
		f, err := matrix.OpenFileAs(file, fn.Layout)
		if err != nil {
			t.Fatal(err)
		}
		n := f.NumRowGroups()
		f.Close()
		for g := range n {
			if err := fn.ProcessElement(t.Context(), RowGroup{File: file, Group: int64(g)}, nil); err != nil {
				t.Fatal(err)
			}
			groups++
		}
	}
	seen := map[string]int{}
	shards := map[int]bool{}
	fn.FinishBundle(func(shard int, batch []byte) {
		if shards[shard] {
			t.Errorf("shard %d sent twice", shard)
		}
		shards[shard] = true
		keys := decodeNames(nil, batch)
		if !slices.IsSortedFunc(keys, bytes.Compare) {
			t.Errorf("shard %d: names not sorted", shard)
		}
		for _, k := range keys {
			seen[string(k)]++
		}
	})
	held := map[uint32]bool{}
	for _, f := range m.Features {
		held[f] = true
	}
	if shard := len(shards); shard < 2 || shard > 16 {
		t.Errorf("names sent in %d shards, want 2 to 16", shard)
	}
	if groups < 4 || len(seen) != len(held) {
		t.Fatalf("%d row groups sent %d distinct names, want %d from at least 4 groups", groups, len(seen), len(held))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("name %x sent %d times, want once", k, n)
		}
	}
	fn.FinishBundle(func(int, []byte) { t.Error("an empty bundle sent a batch") })
}

// TestVocabCombine: batches with repeats, split and merged in any order,
// combine to the sorted distinct names.
func TestVocabCombine(t *testing.T) {
	var c vocabCombineFn
	batch := func(names ...string) []byte {
		var keys [][]byte
		for _, n := range names {
			keys = append(keys, []byte(n))
		}
		return encodeNames(keys)
	}
	a := c.AddInput(c.AddInput(c.CreateAccumulator(), batch("b", "d")), batch("", "a", "d"))
	b := c.AddInput(c.CreateAccumulator(), batch("c", "b", "e"))
	got := decodeNames(nil, c.ExtractOutput(c.MergeAccumulators(b, a)))
	want := [][]byte{{}, []byte("a"), []byte("b"), []byte("c"), []byte("d"), []byte("e")}
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("combined %q, want %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("a truncated batch did not panic")
		}
	}()
	decodeNames(nil, batch("abc")[:2])
}
