package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

// pairRow is one row of a long-form file.
type pairRow struct {
	UserID  string `parquet:"user_id"`
	Feature int64  `parquet:"feature"`
}

// writeLongInput writes the pairs of m's users that hold features to
// three files of dir, in row groups of 50 pairs, shuffled so that a
// user's pairs lie in any of them, every fourth pair repeated. It returns
// the users written, in list form.
func writeLongInput(t testing.TB, dir string, m *matrix.Matrix) *matrix.Matrix {
	t.Helper()
	held := matrix.New(0, 0)
	var pairs []pairRow
	for i, u := range m.Users {
		r := m.Row(i)
		if len(r) == 0 {
			continue
		}
		held.Append(u, r)
		for j, f := range r {
			pairs = append(pairs, pairRow{u, int64(f)})
			if j%4 == 0 {
				pairs = append(pairs, pairRow{u, int64(f)})
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	for part := range 3 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("pairs-%d.parquet", part)))
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[pairRow](f)
		for rows := pairs[part*len(pairs)/3 : (part+1)*len(pairs)/3]; len(rows) > 0; {
			n := min(50, len(rows))
			if _, err := w.Write(rows[:n]); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			rows = rows[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return held
}

// TestRunLongForm: the release of a long-form input, its pairs shuffled
// across files and row groups with repeats, is byte for byte the release
// of the same users in list form (same seed, ids kept, several chunks,
// pools), and the report says which shape and columns were read.
func TestRunLongForm(t *testing.T) {
	if testing.Short() {
		t.Skip("two pipeline runs")
	}
	dir := t.TempDir()
	m, err := gen.SBM(gen.SBMParams{N: 1200, S: 40, Q: 0.5, P: 0.005, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long")
	os.Mkdir(long, 0o755)
	held := writeLongInput(t, long, m)
	list := filepath.Join(dir, "list.parquet")
	if err := matrix.WriteMatrix(list, held, matrix.WriterOptions{RowGroupRows: 100}); err != nil {
		t.Fatal(err)
	}
	base := Params{Solver: solver.Params{K: 5, Seed: 7}, ChunkSize: 300, Key: transforms.KeySpectral, PoolShare: DefaultPoolShare}
	pl, pg := base, base
	pl.Input, pl.Output = list, filepath.Join(dir, "out-list")
	pg.Input, pg.Output = long, filepath.Join(dir, "out-long")
	repList, repLong := runOK(t, pl).Report, runOK(t, pg).Report
	_, a := readRelease(t, pl.Output)
	_, b := readRelease(t, pg.Output)
	if len(a) == 0 || !maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) }) {
		t.Errorf("the long form's release (%d shards) differs from the list form's (%d shards)", len(b), len(a))
	}
	if repList.Pipeline.Chunks < 3 || repLong.Pipeline.Chunks != repList.Pipeline.Chunks || repLong.Rows != int64(held.NumRows()) || repLong.Jaccard != repList.Jaccard {
		t.Errorf("long form: %d chunks, %d rows, J %v; list form: %d chunks, J %v; want %d rows",
			repLong.Pipeline.Chunks, repLong.Rows, repLong.Jaccard, repList.Pipeline.Chunks, repList.Jaccard, held.NumRows())
	}
	var repeats int64 // every fourth pair of a user
	for i := range held.Users {
		repeats += int64((len(held.Row(i)) + 3) / 4)
	}
	want := held.NumEntries() + repeats
	in := repLong.GetInput()
	if in.GetShape() != "long" || in.GetUserColumn() != "user_id" || in.GetFeatureColumn() != "feature" ||
		in.GetPairs() != want || in.GetRepeatedPairs() != repeats {
		t.Errorf("report input %v, want long (user_id, feature), %d pairs, %d repeated", in, want, repeats)
	}
	if in := repList.GetInput(); in.GetShape() != "list" || in.GetFeatureColumn() != "features" {
		t.Errorf("list form's report input %v", in)
	}
}

// TestRunLongFormRefused: a long-form input with a null feature in a
// later file fails the run with that file, row and column, and nothing
// is published; so does one of fewer than k users.
func TestRunLongFormRefused(t *testing.T) {
	dir := t.TempDir()
	type nullRow struct {
		UserID  string `parquet:"user_id"`
		Feature *int64 `parquet:"feature,optional"`
	}
	one := int64(1)
	var rows []nullRow
	for i := range 20 {
		rows = append(rows, nullRow{fmt.Sprintf("u%d", i), &one})
	}
	rows[13].Feature = nil
	path := filepath.Join(dir, "null.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[nullRow](f)
	w.Write(rows)
	w.Close()
	f.Close()
	out := filepath.Join(dir, "out")
	_, err = Run(context.Background(), Params{Input: path, Output: out, Solver: solver.Params{K: 2, Seed: 1}})
	var ie *InputError
	if want := path + ": row 13: column feature: null feature"; !errors.As(err, &ie) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Run: %v; want an InputError of one line naming %q", err, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("a failed run left %d entries in %s", len(entries), out)
	}
	few := filepath.Join(dir, "few.parquet")
	f, err = os.Create(few)
	if err != nil {
		t.Fatal(err)
	}
	pw := parquet.NewGenericWriter[pairRow](f)
	for i := range 12 { // 12 pairs, 3 users
		pw.Write([]pairRow{{fmt.Sprintf("u%d", i%3), int64(i)}})
	}
	pw.Close()
	f.Close()
	_, err = Run(context.Background(), Params{Input: few, Output: out, Solver: solver.Params{K: 4, Seed: 1}})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "input has 3 users, fewer than k=4") {
		t.Errorf("Run on 3 users, k=4: %v; want an InputError", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("a failed run left %d entries in %s", len(entries), out)
	}
}
