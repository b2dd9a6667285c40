package transforms

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
