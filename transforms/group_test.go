package transforms

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/parquet-go/parquet-go"

	"github.com/smoothanon/smoothanon/matrix"
)

func init() {
	register.Function2x0(describeRows)
	register.Function2x0(blockBounds)
	register.Emitter1[string]()
}

// longRow is one pair of a long-form file.
type longRow struct {
	UserID  string `parquet:"user_id"`
	Feature int64  `parquet:"feature"`
}

var longLayout = matrix.Layout{Shape: matrix.ShapeLong, User: matrix.ColUserID, Feature: matrix.ColFeature}

// writeLongFiles writes pairs to files files of dir, each cut into
// row groups of at most groupRows rows, and returns the files.
func writeLongFiles(t *testing.T, dir string, pairs []longRow, files, groupRows int) []string {
	t.Helper()
	var paths []string
	for i := range files {
		part := pairs[i*len(pairs)/files : (i+1)*len(pairs)/files]
		path := filepath.Join(dir, fmt.Sprintf("long-%d.parquet", i))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[longRow](f)
		for len(part) > 0 {
			n := min(groupRows, len(part))
			if _, err := w.Write(part[:n]); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			part = part[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		paths = append(paths, path)
	}
	return paths
}

// longPairs returns m's pairs, every third one repeated, shuffled.
func longPairs(m *matrix.Matrix, rng *rand.Rand) []longRow {
	var pairs []longRow
	for i, u := range m.Users {
		for j, f := range m.Row(i) {
			pairs = append(pairs, longRow{u, int64(f)})
			if j%3 == 0 {
				pairs = append(pairs, longRow{u, int64(f)})
			}
		}
	}
	rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	return pairs
}

// describeRows emits one line per row: the user and its features.
func describeRows(b matrix.Matrix, emit func(string)) {
	for i, u := range b.Users {
		emit(fmt.Sprintf("%s %v", u, b.Row(i)))
	}
}

// blockBounds emits a line for every block over the bounds, or whose
// rows are not sorted and free of repeats. A block of one row may hold
// more than MaxBlockEntries entries.
func blockBounds(b matrix.Matrix, emit func(string)) {
	if b.NumRows() > MaxBlockRows || b.NumRows() > 1 && b.NumEntries() > MaxBlockEntries {
		emit(fmt.Sprintf("block of %d rows, %d entries", b.NumRows(), b.NumEntries()))
	}
	for i := range b.Users {
		r := b.Row(i)
		for j := 1; j < len(r); j++ {
			if r[j-1] >= r[j] {
				emit(fmt.Sprintf("row %s not sorted and unique: %v", b.Users[i], r))
				break
			}
		}
	}
}

// testUsers makes n users of random features, a few of many features,
// one of more than MaxBlockEntries; no user is empty (long form cannot
// hold one).
func testUsers(n int, rng *rand.Rand) *matrix.Matrix {
	m := matrix.New(n, 0)
	for i := range n {
		deg := 1 + rng.IntN(12)
		switch {
		case i == 7:
			deg = MaxBlockEntries + 1000
		case i%50 == 0:
			deg = 2000 + rng.IntN(3000)
		}
		set := map[uint32]bool{}
		for len(set) < deg {
			set[uint32(rng.IntN(4*MaxBlockEntries))] = true
		}
		m.Append(fmt.Sprintf("u%04d", i), slices.Sorted(func(yield func(uint32) bool) {
			for f := range set {
				if !yield(f) {
					return
				}
			}
		}))
	}
	return m
}

// TestGroupPairs: the rows GroupPairs makes of pairs shuffled across
// three files and many row groups, with repeats, are the rows Read makes
// of the same users in list form, in blocks within the bounds.
func TestGroupPairs(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	m := testUsers(600, rng)
	list := filepath.Join(dir, "list.parquet")
	if err := matrix.WriteMatrix(list, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	long := writeLongFiles(t, dir, longPairs(m, rng), 3, 5000)
	for _, path := range long {
		f, err := matrix.OpenFileAs(path, longLayout)
		if err != nil {
			t.Fatal(err)
		}
		if f.NumRowGroups() < 10 {
			t.Fatalf("%s: %d row groups, want many", path, f.NumRowGroups())
		}
		f.Close()
	}
	p, s := beam.NewPipelineWithRoot()
	grouped := GroupPairs(s, long, GroupParams{Layout: longLayout})
	want := Read(s, []string{list}, ReadParams{Layout: matrix.Layout{Shape: matrix.ShapeList, User: matrix.ColUserID, Feature: matrix.ColFeatures}})
	passert.Equals(s, beam.ParDo(s, describeRows, grouped), beam.ParDo(s, describeRows, want))
	passert.Empty(s, beam.ParDo(s, blockBounds, grouped))
	passert.Count(s, beam.ParDo(s, describeRows, grouped), "rows", m.NumRows())
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestGroupPairsEdges: an empty file gives no rows; a user whose pairs
// are all one repeated pair, or lie in three files, is one row.
func TestGroupPairsEdges(t *testing.T) {
	dir := t.TempDir()
	empty := writeLongFiles(t, dir, nil, 1, 10)
	spread := filepath.Join(dir, "spread")
	os.Mkdir(spread, 0o755)
	files := writeLongFiles(t, spread, []longRow{{"a", 5}, {"b", 9}, {"a", 1}, {"b", 9}, {"a", 3}, {"b", 9}}, 3, 1)
	p, s := beam.NewPipelineWithRoot()
	passert.Empty(s, GroupPairs(s.Scope("empty"), empty, GroupParams{Layout: longLayout}))
	got := beam.ParDo(s, describeRows, GroupPairs(s.Scope("spread"), append(files, empty...), GroupParams{Layout: longLayout}))
	passert.Equals(s, got, "a [1 3 5]", "b [9]")
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestGroupPairsRefused: a null feature fails the job with one line
// naming file, row and column.
func TestGroupPairsRefused(t *testing.T) {
	type nullRow struct {
		UserID  string `parquet:"user_id"`
		Feature *int64 `parquet:"feature,optional"`
	}
	path := filepath.Join(t.TempDir(), "null.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	w := parquet.NewGenericWriter[nullRow](f)
	if _, err := w.Write([]nullRow{{"a", &one}, {"b", nil}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()
	p, s := beam.NewPipelineWithRoot()
	GroupPairs(s, []string{path}, GroupParams{Layout: longLayout})
	err = ptest.Run(p)
	line, ok := JobInputError(err)
	if want := path + ": row 1: column feature: null feature"; !ok || !strings.Contains(line, want) {
		t.Errorf("job error %v: input error %q, want %q", err, line, want)
	}
}

func TestGroupCodecRoundTrip(t *testing.T) {
	for _, f := range [][]uint32{nil, {0}, {1, 2, 3}, {5, 1 << 31, 1<<32 - 1}} {
		got, err := appendFeatures(nil, appendGaps(nil, f))
		if err != nil || !slices.Equal(got, f) {
			t.Errorf("%v: round trip %v, %v", f, got, err)
		}
	}
	if _, err := appendFeatures(nil, []byte{0x80}); err == nil {
		t.Error("a truncated varint decoded")
	}
}
