package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// rawDir is the shared dataset directory, ../shared/data/raw from the repo root.
var rawDir = filepath.Join("..", "..", "shared", "data", "raw")

// dataset returns the path of a shared raw dataset, skipping the test when
// it is absent.
func dataset(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(rawDir, name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared dataset %s not available (%v); it lives in ../shared/data/raw next to the repository", name, err)
	}
	return p
}

// rowNames renders row i of a one-hot matrix with its feature names.
func rowNames(m *matrix.Matrix, st Stats, i int) string {
	var s []string
	for _, f := range m.Row(i) {
		s = append(s, st.FeatureNames[f])
	}
	return m.Users[i] + ": " + strings.Join(s, " | ")
}

func TestAdultDataset(t *testing.T) {
	p := dataset(t, "adult.data.gz")
	m, st, err := Import("adult", p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	// The paper's Table: 32,561 × 102, 260,488 entries.
	if m.NumRows() != 32561 || st.Columns != 102 || m.NumColumns() != 102 || m.NumEntries() != 260488 {
		t.Fatalf("adult: %d rows, %d columns, %d entries; want 32561, 102, 260488", m.NumRows(), st.Columns, m.NumEntries())
	}
	// Per-attribute value counts from the dataset's SOURCES.md.
	perAttr := map[string]int{}
	for _, n := range st.FeatureNames {
		a, _, _ := strings.Cut(n, "=")
		perAttr[a]++
	}
	wantAttr := map[string]int{"workclass": 9, "education": 16, "marital-status": 7, "occupation": 15,
		"relationship": 6, "race": 5, "sex": 2, "native-country": 42}
	if !reflect.DeepEqual(perAttr, wantAttr) {
		t.Errorf("values per attribute %v, want %v", perAttr, wantAttr)
	}
	// First and last records of adult.data.
	want0 := "0: workclass=State-gov | education=Bachelors | marital-status=Never-married | occupation=Adm-clerical | " +
		"relationship=Not-in-family | race=White | sex=Male | native-country=United-States"
	want1 := "32560: workclass=Self-emp-inc | education=HS-grad | marital-status=Married-civ-spouse | occupation=Exec-managerial | " +
		"relationship=Wife | race=White | sex=Female | native-country=United-States"
	if got := rowNames(m, st, 0); got != want0 {
		t.Errorf("row 0:\n got %s\nwant %s", got, want0)
	}
	if got := rowNames(m, st, m.NumRows()-1); got != want1 {
		t.Errorf("last row:\n got %s\nwant %s", got, want1)
	}
	if st.Records != 32561 || st.Skipped != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestPlaystoreDataset(t *testing.T) {
	p := dataset(t, "googleplaystore.csv.gz")
	m, st, err := Import("playstore", p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	// 10,841 data rows - 1,362 "Varies with device" - 807 repeated Apps = 8,672,
	// the paper's row count; 10 entries per row give its 86,720 entries.
	if m.NumRows() != 8672 || st.Columns != 452 || m.NumEntries() != 86720 {
		t.Fatalf("playstore: %d rows, %d columns, %d entries; want 8672, 452, 86720", m.NumRows(), st.Columns, m.NumEntries())
	}
	if st.Records != 10841 || st.RepairedRows != 1 || st.DroppedVaries != 1362 || st.DroppedDuplicates != 807 {
		t.Errorf("stats: %d records, %d repaired, %d varies, %d duplicates; want 10841, 1, 1362, 807",
			st.Records, st.RepairedRows, st.DroppedVaries, st.DroppedDuplicates)
	}
	for i := range m.Users {
		if len(m.Row(i)) != 10 {
			t.Fatalf("row %d (%q) has %d entries, want 10", i, m.Users[i], len(m.Row(i)))
		}
	}
	want0 := "Photo Editor & Candy Camera & Grid & ScrapBook: Category=ART_AND_DESIGN | Rating=4.1 | Reviews=100-999 | Size=19M | " +
		"Installs=10,000+ | Type=Free | Price=0 | Content Rating=Everyone | Genres=Art & Design | Android Ver=4.0.3 and up"
	if got := rowNames(m, st, 0); got != want0 {
		t.Errorf("row 0:\n got %s\nwant %s", got, want0)
	}
	i := slices.Index(m.Users, "Life Made WI-Fi Touchscreen Photo Frame")
	wantL := "Life Made WI-Fi Touchscreen Photo Frame: Category=NaN | Rating=1.9 | Reviews=10-99 | Size=3M | " +
		"Installs=1,000+ | Type=Free | Price=0 | Content Rating=Everyone | Genres=NaN | Android Ver=4.0 and up"
	if i < 0 || rowNames(m, st, i) != wantL {
		t.Errorf("repaired row %d: got %s\nwant %s", i, rowNames(m, st, max(i, 0)), wantL)
	}
}

func TestDBLPDataset(t *testing.T) {
	p := dataset(t, "com-dblp.ungraph.noheader.txt.gz")
	m, st, err := Import("edges", p, Options{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	// The paper's Table: 317,080 × 317,080, 2,099,732 entries.
	if m.NumRows() != 317080 || st.Columns != 317080 || m.NumEntries() != 2099732 {
		t.Fatalf("dblp: %d rows, %d columns, %d entries; want 317080, 317080, 2099732", m.NumRows(), st.Columns, m.NumEntries())
	}
	if st.Records != 1049866 || st.RepeatedEntries != 0 || st.SelfLoops != 0 || st.EmptyRows != 0 {
		t.Errorf("stats %+v", st)
	}
	// SNAP's first edges are 0-1, 0-2, 0-4519, 0-23073, ...; ids are kept.
	if m.Users[0] != "0" || !reflect.DeepEqual(m.Row(0)[:4], []uint32{1, 2, 4519, 23073}) {
		t.Errorf("row 0 = %s: %v", m.Users[0], m.Row(0)[:4])
	}
	if last := m.Users[m.NumRows()-1]; last != "425956" {
		t.Errorf("last node %s, want 425956", last)
	}
	// Symmetric: j in row(i) iff i in row(j).
	row := make(map[uint32]int, m.NumRows())
	for i, u := range m.Users {
		row[uint32(mustAtoi(u))] = i
	}
	for i, u := range m.Users {
		for _, f := range m.Row(i) {
			j, ok := row[f]
			if !ok {
				t.Fatalf("feature %d of %s is not a node", f, u)
			}
			if !containsSorted(m.Row(j), uint32(mustAtoi(u))) {
				t.Fatalf("edge %s-%d is not symmetric", u, f)
			}
		}
	}

	// Directed: the same nodes, half the entries, nodes without out-edges empty.
	d, dst, err := Import("edges", p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.NumRows() != 317080 || d.NumEntries() != 1049866 || dst.EmptyRows == 0 {
		t.Fatalf("directed dblp: %d rows, %d entries, %d empty rows", d.NumRows(), d.NumEntries(), dst.EmptyRows)
	}
	if !reflect.DeepEqual(d.Users, m.Users) {
		t.Fatalf("directed and undirected imports name different nodes")
	}
}

func containsSorted(s []uint32, v uint32) bool {
	lo, hi := 0, len(s)
	for lo < hi {
		mid := (lo + hi) / 2
		if s[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo < len(s) && s[lo] == v
}

func mustAtoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestDeterministic imports the same data twice.
func TestDeterministic(t *testing.T) {
	p := dataset(t, "adult.data.gz")
	a, _, err := Import("adult", p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Import("adult", p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Equal(b) {
		t.Fatal("two imports of adult differ")
	}
}
