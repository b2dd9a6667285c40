package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// pairRow is a long-form row as a warehouse exports it.
type pairRow struct {
	UserID   string `parquet:"user_id"`
	Interest int64  `parquet:"interest"`
}

type nullPairRow struct {
	UserID   string `parquet:"user_id"`
	Interest *int64 `parquet:"interest,optional"`
}

func writeParquet[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// writeLong writes m's pairs in long form to two files of dir, every
// user's pairs split between them, in reverse order, the first pair of
// every row repeated.
func writeLong(t *testing.T, dir string, m *matrix.Matrix) {
	var a, b []pairRow
	for i, u := range m.Users {
		for j, f := range m.Row(i) {
			r := pairRow{u, int64(f)}
			if j%2 == 0 {
				a = append(a, r)
			} else {
				b = append(b, r)
			}
			if j == 0 {
				b = append(b, r)
			}
		}
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	writeParquet(t, filepath.Join(dir, "part-0.parquet"), a)
	writeParquet(t, filepath.Join(dir, "part-1.parquet"), b)
}

// TestSolveLongForm: solve on the long form of an input releases what it
// releases on the list form (same seed, ids kept), the report says which
// shape and columns it read, and verify takes the long form too.
func TestSolveLongForm(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "list.parquet")
	m := writeSolveInput(t, list, 40)
	long := filepath.Join(dir, "long")
	os.Mkdir(long, 0o755)
	writeLong(t, long, m)
	outList, outLong := filepath.Join(dir, "rl.parquet"), filepath.Join(dir, "rg.parquet")
	rep := filepath.Join(dir, "report.json")
	common := []string{"--k", "4", "--seed", "3", "--user_ids", "keep", "--quiet"}
	if code, _, stderr := runSolveCLI(append([]string{"--input", list, "--output", outList}, common...)...); code != 0 {
		t.Fatalf("list form: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runSolveCLI(append([]string{"--input", long, "--output", outLong, "--feature_column", "interest", "--metrics_out", rep}, common...)...); code != 0 {
		t.Fatalf("long form: exit %d: %s", code, stderr)
	}
	a, _ := os.ReadFile(outList)
	b, _ := os.ReadFile(outLong)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the long form's release (%d bytes) differs from the list form's (%d bytes)", len(b), len(a))
	}
	var r smoothanonpb.RunReport
	if raw, err := os.ReadFile(rep); err != nil || protojson.Unmarshal(raw, &r) != nil {
		t.Fatalf("report: %v", err)
	}
	in := r.GetInput()
	if in.GetShape() != "long" || in.GetUserColumn() != "user_id" || in.GetFeatureColumn() != "interest" ||
		in.GetPairs() != m.NumEntries()+40 || in.GetRepeatedPairs() != 40 {
		t.Errorf("report input %v, want long (user_id, interest), %d pairs, 40 repeated", in, m.NumEntries()+40)
	}
	code, _, stderr := genCLI("verify", "--input", long, "--feature_column", "interest", "--output", outLong, "--k", "4")
	if code != 0 || !strings.Contains(stderr, "valid smooth 4-anonymous release: 40 rows") {
		t.Errorf("verify of the long form: exit %d, %s", code, stderr)
	}
}

// TestLayoutRefused: bad long-form input is one line naming file, row
// and column, exit 2, and nothing is written, for run as for solve.
func TestLayoutRefused(t *testing.T) {
	dir := t.TempDir()
	one := int64(1)
	null := filepath.Join(dir, "null.parquet")
	writeParquet(t, null, []nullPairRow{{"a", &one}, {"b", &one}, {"c", nil}})
	list := filepath.Join(dir, "list.parquet")
	writeSolveInput(t, list, 8)
	mixed := filepath.Join(dir, "mixed")
	os.Mkdir(mixed, 0o755)
	writeSolveInput(t, filepath.Join(mixed, "a.parquet"), 8)
	type longRow struct {
		UserID  string `parquet:"user_id"`
		Feature int64  `parquet:"feature"`
	}
	writeParquet(t, filepath.Join(mixed, "b.parquet"), []longRow{{"z", 1}})
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"solve", "--input", null, "--feature_column", "interest"}, null + ": row 2: column interest: null feature"},
		{[]string{"solve", "--input", list, "--input_shape", "long", "--feature_column", "features"}, list + ": column features: a list where a scalar was expected (long form: one feature per row)"},
		{[]string{"solve", "--input", list, "--user_column", "uid"}, list + ": column uid: missing column (schema has user_id, features)"},
		{[]string{"baseline", "--method", "mondrian", "--input", mixed, "--feature_column", "interest"}, filepath.Join(mixed, "a.parquet") + ": column interest: missing column"},
		{[]string{"solve", "--input", mixed, "--input_shape", "auto"}, filepath.Join(mixed, "b.parquet") + ": column feature: long form (user_id, feature), but " + filepath.Join(mixed, "a.parquet") + " is list form (user_id, features): files of mixed shapes in one input"},
		{[]string{"run", "--input", null, "--feature_column", "interest"}, null + ": row 2: column interest: null feature"},
		{[]string{"run", "--input", list, "--input_shape", "long", "--feature_column", "features"}, list + ": column features: a list where a scalar was expected (long form: one feature per row)"},
		{[]string{"run", "--input", list, "--user_column", "uid"}, list + ": column uid: missing column (schema has user_id, features)"},
		{[]string{"run", "--input", mixed, "--input_shape", "auto"}, filepath.Join(mixed, "b.parquet") + ": column feature: long form (user_id, feature), but " + filepath.Join(mixed, "a.parquet") + " is list form (user_id, features): files of mixed shapes in one input"},
		{[]string{"solve", "--input", list, "--input_shape", "wide"}, "invalid value \"wide\" for flag -input_shape"},
	} {
		args := append(c.args, "--output", out+".parquet", "--k", "2")
		if c.args[0] == "run" {
			args = append(c.args, "--output", out, "--k", "2")
		}
		code, _, stderr := genCLI(args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line containing %q", c.args, code, stderr, c.want)
		}
		for _, p := range []string{out, out + ".parquet"} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%q left %s behind", c.args, p)
			}
		}
	}
}

// TestRunDryRunLayout: run takes list form under other column names, and
// the dry run says which.
func TestRunDryRunLayout(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	type row struct {
		UID       string   `parquet:"uid"`
		Interests []uint32 `parquet:"interests,list"`
	}
	writeParquet(t, in, []row{{"a", []uint32{1, 2}}, {"b", []uint32{2}}, {"c", []uint32{1}}, {"d", []uint32{3}}})
	var stdout, stderr bytes.Buffer
	code := runMain([]string{"run", "--input", in, "--user_column", "uid", "--feature_column", "interests", "--output", filepath.Join(dir, "out"), "--k", "2", "--dry_run"}, &stdout, &stderr)
	flag.CommandLine.Set("dry_run", "false")
	if first, _, _ := strings.Cut(stdout.String(), "\n"); code != 0 || !strings.HasSuffix(first, ", input list (uid, interests)") {
		t.Errorf("dry run: exit %d, first line %q, stderr %s", code, first, stderr.String())
	}
}
