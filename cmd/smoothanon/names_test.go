package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// namedRows reads a release of named features as each user's names; the
// release must hold names of the kind want.
func namedRows(t *testing.T, spec string, want matrix.Values) map[string][]string {
	t.Helper()
	rel, err := matrix.OpenRelease(spec, matrix.ReleaseOptions{VerifyChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Values != want {
		t.Fatalf("%s: features are %v, want %v", spec, rel.Values, want)
	}
	rows := map[string][]string{}
	err = rel.Read(func(u string, f []uint32) error {
		names := []string{}
		for _, id := range f {
			if want == matrix.ValuesIntegers {
				names = append(names, fmt.Sprint(rel.Vocab.Int64(id)))
			} else {
				names = append(names, rel.Vocab.String(id))
			}
		}
		slices.Sort(names)
		rows[u] = names
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// sameRows compares two releases' rows, users released without
// features (absent from a long-form release) alike.
func sameRows(t *testing.T, what string, got, want map[string][]string) {
	t.Helper()
	n := 0
	for u, w := range want {
		if g := got[u]; !slices.Equal(g, w) && (len(g) > 0 || len(w) > 0) {
			if n++; n <= 3 {
				t.Errorf("%s: user %s released %q, want %q", what, u, g, w)
			}
		}
	}
	for u, g := range got {
		if _, ok := want[u]; !ok && len(g) > 0 {
			t.Errorf("%s: user %s not in the other release", what, u)
		}
	}
}

// stringPair is a long-form row of a string interest.
type stringPair struct {
	UserID  string `parquet:"user_id"`
	Feature string `parquet:"interest"`
}

// TestRunNamedFeatures: string interests in long form, split over files
// in shuffled order, and the same interests in list form, give one
// release, carrying the interests as strings, valid by verify against
// either input; list and long output shapes hold the same names; a
// release of names compared with an input of ids is refused.
func TestRunNamedFeatures(t *testing.T) {
	dir := t.TempDir()
	all, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 1500, Columns: 400, MeanDegree: 6, Zipf: 1.1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	m := matrix.New(0, 0) // long form cannot hold a user without features
	for i, u := range all.Users {
		if len(all.Row(i)) > 0 {
			m.Append(u, all.Row(i))
		}
	}
	names := interestNames(400)
	list := filepath.Join(dir, "list.parquet")
	if err := matrix.WriteMatrix(list, m, matrix.WriterOptions{Vocab: names}); err != nil {
		t.Fatal(err)
	}
	ids := filepath.Join(dir, "ids.parquet")
	if err := matrix.WriteMatrix(ids, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	// The long form: every pair, in random order, over two files, one
	// pair repeated.
	var pairs []stringPair
	for i, u := range m.Users {
		for _, f := range m.Row(i) {
			pairs = append(pairs, stringPair{u, names.String(f)})
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	pairs = append(pairs, pairs[0])
	longDir := filepath.Join(dir, "long")
	os.Mkdir(longDir, 0o755)
	half := len(pairs) / 2
	for i, part := range [][]stringPair{pairs[:half], pairs[half:]} {
		if err := parquet.WriteFile(filepath.Join(longDir, fmt.Sprintf("part-%d.parquet", i)), part); err != nil {
			t.Fatal(err)
		}
	}

	run := func(in, out string, args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"run", "--input", in, "--output", out, "--k", "8", "--seed", "5", "--shards", "2",
			"--runner", "prism", "--user_ids", "keep", "--chunk_key", "hub", "--start", "both"}, args...), &stdout, &stderr)
		if code != 0 {
			t.Fatalf("run %s: exit %d: %s", in, code, stderr.String())
		}
	}
	verify := func(in, out string, args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"verify", "--input", in, "--output", out, "--k", "8"}, args...), &stdout, &stderr)
		return code, stderr.String()
	}
	fromList, fromLong, longOut := filepath.Join(dir, "r-list"), filepath.Join(dir, "r-long"), filepath.Join(dir, "r-long-out")
	table, report := filepath.Join(dir, "features.csv"), filepath.Join(dir, "report.json")
	run(list, fromList, "--feature_report", table, "--metrics_out", report)
	run(longDir, fromLong, "--feature_column", "interest")
	run(longDir, longOut, "--feature_column", "interest", "--output_shape", "long")

	want := namedRows(t, fromList, matrix.ValuesStrings)
	sameRows(t, "long input", namedRows(t, fromLong, matrix.ValuesStrings), want)
	sameRows(t, "long output", namedRows(t, longOut, matrix.ValuesStrings), want)
	released := 0
	for _, r := range want {
		for _, n := range r {
			if !strings.HasPrefix(n, "/interest/") {
				t.Fatalf("released name %q is not an input name", n)
			}
			released++
		}
	}
	if released == 0 {
		t.Fatal("nothing released")
	}

	// The feature table and the report's lists name the features.
	b, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "/interest/") {
		t.Errorf("feature table begins %q, want names", lines[:min(2, len(lines))])
	}
	rb, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep smoothanonpb.RunReport
	if err := protojson.Unmarshal(rb, &rep); err != nil {
		t.Fatal(err)
	}
	if f := rep.GetFeatures().GetInput().GetMostHeld(); len(f) == 0 || !strings.HasPrefix(f[0].Name, "/interest/") {
		t.Errorf("report's most held features %v, want names", f)
	}
	if in := rep.GetInput(); in.GetFeatureValues() != "string names" || in.GetNames() == 0 {
		t.Errorf("report's input %v, want string names counted", in)
	}

	for _, c := range []struct {
		in, out string
		args    []string
	}{{list, fromList, nil}, {list, fromLong, nil}, {longDir, fromList, []string{"--feature_column", "interest"}}, {list, longOut, nil}} {
		if code, stderr := verify(c.in, c.out, c.args...); code != 0 {
			t.Errorf("verify %s against %s: exit %d: %s", c.out, c.in, code, stderr)
		}
	}
	if code, stderr := verify(ids, fromList); code != 2 || !strings.Contains(stderr, "holds features as string names, the data it is compared with as ids") {
		t.Errorf("names against ids: exit %d: %s", code, stderr)
	}
}

// TestRunIntegerNames: INT64 interests of any magnitude, with
// --feature_values names, come back as the same INT64s; without it they
// are ids, refused when out of range, with a hint.
func TestRunIntegerNames(t *testing.T) {
	type intPair struct {
		UserID  string `parquet:"user_id"`
		Feature int64  `parquet:"feature"`
	}
	big := []int64{-1 << 62, -3, 1 << 40, 1<<63 - 1}
	var pairs []intPair
	for u := range 60 {
		for j, x := range big {
			if (u+j)%3 != 0 {
				pairs = append(pairs, intPair{fmt.Sprintf("u%02d", u), x})
			}
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	if err := parquet.WriteFile(in, pairs); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--input", in, "--output", out, "--k", "4", "--runner", "prism", "--user_ids", "keep"}
	if code := runMain(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "out of range") {
		t.Errorf("as ids: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := runMain(append(args, "--feature_values", "names"), &stdout, &stderr); code != 0 {
		t.Fatalf("as names: exit %d: %s", code, stderr.String())
	}
	inputNames := map[string]bool{}
	for _, x := range big {
		inputNames[fmt.Sprint(x)] = true
	}
	for u, r := range namedRows(t, out, matrix.ValuesIntegers) {
		for _, n := range r {
			if !inputNames[n] {
				t.Errorf("user %s released %s, not an input value", u, n)
			}
		}
	}
	stderr.Reset()
	if code := runMain([]string{"verify", "--input", in, "--output", out, "--k", "4", "--feature_values", "names"}, &stdout, &stderr); code != 0 {
		t.Errorf("verify: exit %d: %s", code, stderr.String())
	}
	// solve writes the same kind of release, its feature table named.
	solved, table := filepath.Join(dir, "solved.parquet"), filepath.Join(dir, "features.csv")
	stderr.Reset()
	if code := runMain([]string{"solve", "--input", in, "--output", solved, "--k", "4", "--user_ids", "keep", "--feature_values", "names",
		"--feature_report", table}, &stdout, &stderr); code != 0 {
		t.Fatalf("solve: exit %d: %s", code, stderr.String())
	}
	for u, r := range namedRows(t, solved, matrix.ValuesIntegers) {
		for _, n := range r {
			if !inputNames[n] {
				t.Errorf("solve: user %s released %s, not an input value", u, n)
			}
		}
	}
	b, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1+len(big) {
		t.Fatalf("feature table %q, want a line per input value", lines)
	}
	for _, l := range lines[1:] {
		if !inputNames[strings.Split(l, ",")[0]] {
			t.Errorf("feature table line %q does not name an input value", l)
		}
	}
}

// TestRunBadNames: a null interest, an interest that is not UTF-8, and
// files of string and integer interests in one input are each one line
// naming file (row and column where there is one), exit 2, nothing
// written.
func TestRunBadNames(t *testing.T) {
	type nullable struct {
		UserID  string  `parquet:"user_id"`
		Feature *string `parquet:"feature,optional"`
	}
	type raw struct {
		UserID  string `parquet:"user_id"`
		Feature []byte `parquet:"feature"`
	}
	type ints struct {
		UserID  string `parquet:"user_id"`
		Feature int64  `parquet:"feature"`
	}
	dir := t.TempDir()
	ok := "/ok"
	var null []nullable
	var utf []raw
	var good []raw
	var num []ints
	for u := range 40 {
		id := fmt.Sprintf("u%02d", u)
		null = append(null, nullable{id, &ok})
		utf = append(utf, raw{id, []byte("/ok")})
		good = append(good, raw{id, []byte("/ok")})
		num = append(num, ints{id, 7})
	}
	null[17].Feature = nil
	utf[23].Feature = []byte{'/', 0xff}
	write := func(name string, rows func(path string) error) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := rows(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nullFile := write("null.parquet", func(p string) error { return parquet.WriteFile(p, null) })
	utfFile := write("utf.parquet", func(p string) error { return parquet.WriteFile(p, utf) })
	write("mixed/a.parquet", func(p string) error { return parquet.WriteFile(p, good) })
	mixedB := write("mixed/b.parquet", func(p string) error { return parquet.WriteFile(p, num) })
	for _, c := range []struct {
		in, want string
		args     []string
	}{
		{nullFile, nullFile + ": row 17: column feature: null feature", nil},
		{utfFile, utfFile + ": row 23: column feature: feature not valid UTF-8", nil},
		{filepath.Join(dir, "mixed"), mixedB + ": column feature: long form (user_id, feature) of integer names, but " + filepath.Join(dir, "mixed", "a.parquet") +
			" is long form (user_id, feature) of string names: files of mixed shapes in one input", []string{"--feature_values", "names"}},
	} {
		out := filepath.Join(dir, "out-"+filepath.Base(c.in))
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"run", "--input", c.in, "--output", out, "--k", "4", "--runner", "prism"}, c.args...), &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		last := lines[len(lines)-1]
		if code != 2 || !strings.Contains(last, c.want) || strings.Contains(stderr.String(), "\xff") {
			t.Errorf("%s: exit %d, last line %q, want %q", c.in, code, last, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s written", c.in, out)
		}
	}
}
