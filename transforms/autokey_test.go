package transforms

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
)

func userLists(t testing.TB, rows int64) *matrix.Matrix {
	t.Helper()
	m, err := gen.UserListsMatrix(gen.UserListsParams{Rows: rows, Columns: 1e6, MeanDegree: 10, Zipf: 1.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sbm(t testing.TB, p gen.SBMParams) *matrix.Matrix {
	t.Helper()
	m, err := gen.SBM(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func rowsOf(m *matrix.Matrix) [][]uint32 {
	rows := make([][]uint32, m.NumRows())
	for i := range rows {
		rows[i] = m.Row(i)
	}
	return rows
}

// writeFiles writes m as parts Parquet files with row groups of groupRows
// rows and returns their paths, sorted.
func writeFiles(t testing.TB, dir string, m *matrix.Matrix, parts int, groupRows int64) []string {
	t.Helper()
	var files []string
	n := m.NumRows()
	for j := 0; j < parts; j++ {
		sub := matrix.New(0, 0)
		for i := j * n / parts; i < (j+1)*n/parts; i++ {
			sub.Append(m.Users[i], m.Row(i))
		}
		path := filepath.Join(dir, fmt.Sprintf("in-%03d.parquet", j))
		if err := matrix.WriteMatrix(path, sub, matrix.WriterOptions{RowGroupRows: groupRows}); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	return files
}

// TestTopShare: the statistic ChooseKey thresholds separates lists
// without community structure from block models, and degenerate samples
// count as an unordered coordinate.
func TestTopShare(t *testing.T) {
	for _, c := range []struct {
		name     string
		rows     [][]uint32
		lo, hi   float64
		wantUsed int
	}{
		{"user lists", rowsOf(userLists(t, 1<<15)), autoHubShare, 1, -1},
		{"block model", rowsOf(sbm(t, gen.SBMParams{N: 1 << 14, S: 16, Q: 0.6, P: 1.0 / (1 << 14), Seed: 1})), 0, 0.5, -1},
		{"dense blocks", rowsOf(sbm(t, gen.SBMParams{N: 1024, S: 64, Q: 0.8, P: 0.01, Seed: 1})), 0, 0.5, 1024},
		{"nothing shared", [][]uint32{{1, 2}, {3}, {4, 5, 6}}, 1, 1, 0},
		{"one row", [][]uint32{{1, 2}}, 1, 1, 0},
		{"identical rows", [][]uint32{{1, 2}, {1, 2}, {1, 2}}, 1, 1, 3},
		{"no rows", nil, 1, 1, 0},
	} {
		share, used := topShare(c.rows, 1, DefaultSpectralIterations)
		t.Logf("%s: %.4f over %d rows", c.name, share, used)
		if share < c.lo || share > c.hi || (c.wantUsed >= 0 && used != c.wantUsed) {
			t.Errorf("%s: topShare = %.4f over %d rows, want [%v, %v] over %d", c.name, share, used, c.lo, c.hi, c.wantUsed)
		}
	}
}

func TestConcentration(t *testing.T) {
	spread := make([]int64, 200)
	for i := range spread {
		spread[i] = int64(i%2) << 20 // half 0, half 2^20: every square equal
	}
	one := make([]int64, 200)
	one[7] = 1 << 28 // all the deviation on one row of 200 (the top 1%: 2 rows)
	for _, c := range []struct {
		name   string
		y      []int64
		lo, hi float64
	}{
		{"spread", spread, 0.0099, 0.0101},
		{"one row", one, 0.99, 1}, // the other 199 deviate by the mean, 2^28/200
		{"flat", make([]int64, 50), 1, 1},
		{"extremes", []int64{-1 << 29, 1<<29 - 1}, 0.49, 0.51},
		{"small deviations", []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.28, 0.30}, // 81/285 (mean 4): not lost to rounding
	} {
		if got := concentration(c.y); got < c.lo || got > c.hi {
			t.Errorf("%s: concentration = %v, want [%v, %v]", c.name, got, c.lo, c.hi)
		}
	}
}

// TestSampleRows: the sample is bounded, taken in equal shares from evenly
// spaced files and row groups, and skips empty rows.
func TestSampleRows(t *testing.T) {
	// Row i holds feature i/100 (its row group's index, with 100-row
	// groups in one file) and, every 10th row, nothing.
	m := matrix.New(0, 0)
	for i := 0; i < 4000; i++ {
		var f []uint32
		if i%10 != 0 {
			f = []uint32{uint32(i / 100)}
		}
		m.Append(fmt.Sprintf("u%05d", i), f)
	}
	one := writeFiles(t, t.TempDir(), m, 1, 100)
	rows, _, err := sampleRows(one, matrix.Layout{}, 80, 8)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint32]int{}
	for _, r := range rows {
		got[r[0]]++
	}
	want := map[uint32]int{0: 10, 5: 10, 10: 10, 15: 10, 20: 10, 25: 10, 30: 10, 35: 10} // groups i·40/8
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("one file: rows per row group %v, want %v", got, want)
	}

	// 20 files of 200 rows: files j·20/8, two 100-row groups each, one
	// slot per file: 90 rows of its first group, then 10 of its second.
	many := writeFiles(t, t.TempDir(), m, 20, 100)
	rows, _, err = sampleRows(many, matrix.Layout{}, 800, 8)
	if err != nil {
		t.Fatal(err)
	}
	got = map[uint32]int{}
	for _, r := range rows {
		got[r[0]]++
	}
	want = map[uint32]int{} // files 0, 2, 5, 7, 10, 12, 15, 17
	for _, j := range []uint32{0, 2, 5, 7, 10, 12, 15, 17} {
		want[2*j], want[2*j+1] = 90, 10
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("20 files: rows per row group %v, want %v", got, want)
	}

	if _, _, err := sampleRows([]string{filepath.Join(t.TempDir(), "missing.parquet")}, matrix.Layout{}, 80, 8); err == nil || !strings.Contains(err.Error(), "missing.parquet") {
		t.Errorf("missing file: err %v, want it to name the file", err)
	}
}

// TestSampleRowsNames: a name in two files is one feature of the sample.
func TestSampleRowsNames(t *testing.T) {
	type pair struct {
		UserID  string `parquet:"user_id"`
		Feature string `parquet:"feature"`
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	writeRows(t, a, []pair{{"a1", "/x"}, {"a2", "/y"}})
	writeRows(t, b, []pair{{"b1", "/y"}, {"b2", "/x"}})
	l := matrix.Layout{Shape: matrix.ShapeLong, User: matrix.ColUserID, Feature: matrix.ColFeature, Values: matrix.ValuesStrings}
	rows, _, err := sampleRows([]string{a, b}, l, 80, 8)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rows) != "[[0] [1] [1] [0]]" {
		t.Errorf("sampled %v, want /x and /y one id each across files", rows)
	}
}

// TestChooseKey: generated user lists get the hub key, a block model the
// spectral key, a sample too small to judge the spectral key; the choice
// is the same on every call.
func TestChooseKey(t *testing.T) {
	for _, c := range []struct {
		name string
		m    *matrix.Matrix
		want Key
	}{
		{"user lists", userLists(t, 20000), KeyHub},
		{"block model", sbm(t, gen.SBMParams{N: 8192, S: 16, Q: 0.6, P: 1.0 / 8192, Seed: 2}), KeySpectral},
		{"too few rows", userLists(t, 500), KeySpectral},
	} {
		files := writeFiles(t, t.TempDir(), c.m, 3, 1000)
		got, err := ChooseKey(files, matrix.Layout{}, 5)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := ChooseKey(files, matrix.Layout{}, 5)
		if got.Key != c.want || got != again || got.SampleRows <= 0 || got.SampleRows > autoSampleRows {
			t.Errorf("%s: ChooseKey = %+v then %+v, want key %v", c.name, got, again, c.want)
		}
	}
}

func TestChoose(t *testing.T) {
	for _, c := range []struct {
		share float64
		used  int
		want  Key
	}{
		{0.95, autoMinRows, KeyHub},
		{0.95, autoMinRows - 1, KeySpectral}, // too few rows to judge
		{autoHubShare, 5000, KeySpectral},
		{0.91, 5000, KeyHub},
		{0.5, 5000, KeySpectral},
		{1, 0, KeySpectral},
	} {
		if got := choose(c.share, c.used); got != c.want {
			t.Errorf("choose(%v, %d) = %v, want %v", c.share, c.used, got, c.want)
		}
	}
}
