package pipeline

import (
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/sensitive"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
	"github.com/smoothanon/smoothanon/verify"
)

func init() {
	register.Function1x1(showSensitive)
}

// sensitiveFeature is the sensitive feature showSensitive adds.
const sensitiveFeature = 3_000_000_000

// showSensitive gives every released row the sensitive feature
// sensitiveFeature, which nobody held.
func showSensitive(b transforms.OutBlock) transforms.OutBlock {
	out := matrix.New(b.Out.NumRows(), len(b.Out.Features))
	for i, u := range b.Out.Users {
		out.Append(u, append(slices.Clone(b.Out.Row(i)), sensitiveFeature))
	}
	b.Out = *out
	return b
}

// sensitiveParams are the params of a run of files under a list of every
// fifth feature of m (the first written "0<id>") and sensitiveFeature,
// shown in classes of sk, and the list's ids.
func sensitiveParams(t *testing.T, m *matrix.Matrix, files []string, out string, sk int) (Params, []uint32) {
	var lines []string
	for _, f := range slices.Compact(slices.Sorted(slices.Values(m.Features))) {
		if f%5 == 0 {
			lines = append(lines, itoa(f))
		}
	}
	lines[0] = "0" + lines[0] // the same id: the list hashes as without the 0
	lines = append(lines, itoa(sensitiveFeature))
	ids, err := parseList(t, lines).IDs()
	if err != nil {
		t.Fatal(err)
	}
	return Params{Input: strings.Join(files, ","), Output: out, Solver: solver.Params{K: 4, Seed: 1, SensitiveK: sk}, ChunkSize: 100,
		Sensitive: parseList(t, lines)}, ids
}

func parseList(t *testing.T, lines []string) *sensitive.List {
	t.Helper()
	l, err := sensitive.Parse(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// listRecord is the record of a release of ids made under p with the
// list of entries.
func listRecord(t *testing.T, entries []string, p Params) string {
	l, err := parseList(t, entries).Canonical(matrix.ValuesIDs)
	if err != nil {
		t.Fatal(err)
	}
	return sensitive.NewRecord(l, p.Solver).String()
}

func itoa(f uint32) string { return strconv.FormatUint(uint64(f), 10) }

// TestSensitiveRun: a run under a sensitive list publishes a release that
// follows the rule (verify.Check finds it valid with the list), records
// the list in every file, and counts the sensitive entries in its report.
func TestSensitiveRun(t *testing.T) {
	dir := t.TempDir()
	m, files := writeInput(t, dir, gen.SBMParams{N: 300, S: 30, Q: 0.5, P: 0.01, Seed: 2})
	p, ids := sensitiveParams(t, m, files, filepath.Join(dir, "out"), 8)
	var canonical []string
	for _, id := range ids {
		canonical = append(canonical, itoa(id))
	}
	want := listRecord(t, canonical, p)
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Report.GetSensitive()
	if s == nil || s.Held == 0 || s.Created != 0 || s.Violations != 0 || s.SensitiveK != 8 || s.Held != s.Released+s.Suppressed ||
		s.Features != int64(len(ids)) || s.Unmatched != 0 {
		t.Fatalf("sensitive figures %v", s)
	}
	rel, err := matrix.OpenRelease(p.Output, matrix.ReleaseOptions{VerifyChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Sensitive != want {
		t.Fatalf("release records %q, want %q (the list's ids in decimal)", rel.Sensitive, want)
	}
	out, _ := readRelease(t, p.Output)
	rep, err := verify.Check(m, out, verify.Params{K: 4, Sensitive: ids, SensitiveK: 8})
	if err != nil || !rep.Valid {
		t.Fatalf("verify.Check: %v %q", err, rep.GetProblems())
	}
	if rep.Sensitive.Released != s.Released || rep.Sensitive.Held != s.Held {
		t.Errorf("the job counts %v, verify.Check %v", s, rep.Sensitive)
	}
}

// TestSensitiveViolationIsNotPublished: a release that shows a sensitive
// feature against the rule fails the job's verification and is not
// published.
func TestSensitiveViolationIsNotPublished(t *testing.T) {
	dir := t.TempDir()
	m, files := writeInput(t, dir, gen.SBMParams{N: 300, S: 30, Q: 0.5, P: 0.01, Seed: 2})
	p, _ := sensitiveParams(t, m, files, filepath.Join(dir, "out"), 4)
	res, err := run(context.Background(), p, hooks{tamper: func(s beam.Scope, out beam.PCollection) beam.PCollection {
		return beam.ParDo(s.Scope("Tamper"), showSensitive, out)
	}})
	if !errors.Is(err, ErrVerification) {
		t.Fatalf("err %v, want ErrVerification", err)
	}
	s := res.Report.GetSensitive()
	if s.GetViolations() == 0 || s.GetCreated() != int64(m.NumRows()) || !slices.ContainsFunc(res.Report.Problems, func(l string) bool {
		return strings.Contains(l, "sensitive rule")
	}) {
		t.Fatalf("figures %v, problems %q", s, res.Report.Problems)
	}
	if _, err := os.Stat(p.Output); !os.IsNotExist(err) {
		t.Errorf("output exists after a failed verification (%v)", err)
	}
}

// TestSensitiveNames: a run of named features takes a list of names,
// which the workers resolve through the run's vocabulary: the solver and
// Verify follow the rule (a release that ignored it would create
// sensitive entries in smooth classes), the report counts the entry that
// names no feature, and verify.Check finds the release valid with the
// names resolved through the input's own numbering. Entries that are not
// values of the input's features (strings for integers) are refused.
func TestSensitiveNames(t *testing.T) {
	dir := t.TempDir()
	m, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 400, Columns: 60, MeanDegree: 5, Zipf: 1.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.parquet")
	names := make([][]byte, 60)
	var lines []string
	for i := range names {
		names[i] = []byte("/i/" + itoa(uint32(100+i)))
		if i%4 == 0 {
			lines = append(lines, string(names[i]))
		}
	}
	v, err := matrix.NewVocab(matrix.ValuesStrings, names)
	if err != nil {
		t.Fatal(err)
	}
	if err := matrix.WriteMatrix(in, m, matrix.WriterOptions{Vocab: v}); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, "/nobody")
	p := Params{Input: in, Output: filepath.Join(dir, "out"), Solver: solver.Params{K: 4, Seed: 1, SensitiveK: 8}, ChunkSize: 200,
		Sensitive: parseList(t, lines), FeatureTable: filepath.Join(dir, "features.csv")}
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Report.GetSensitive()
	if s == nil || s.Held == 0 || s.Created != 0 || s.Violations != 0 || s.Unmatched != 1 || s.Features != int64(len(lines)) {
		t.Fatalf("sensitive figures %v", s)
	}
	checkSensitiveTable(t, p.FeatureTable, lines, s)
	rel, err := matrix.OpenRelease(p.Output, matrix.ReleaseOptions{VerifyChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := sensitive.NewRecord(parseList(t, lines), p.Solver).String(); rel.Sensitive != want {
		t.Fatalf("release records %q, want %q", rel.Sensitive, want)
	}
	input, st, err := matrix.ReadMatrix(in, matrix.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rel.Vocab = st.Vocab.Grown()
	out := matrix.New(0, 0)
	if err := rel.Read(func(u string, f []uint32) error {
		out.Append(u, f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ids, err := parseList(t, lines).Resolve(st.Vocab)
	if err != nil || len(ids) != len(lines)-1 {
		t.Fatalf("list resolved to %v (%v)", ids, err)
	}
	rep, err := verify.Check(input, out, verify.Params{K: 4, Sensitive: ids, SensitiveK: 8})
	if err != nil || !rep.Valid || rep.Sensitive.Held != s.Held || rep.Sensitive.Released != s.Released {
		t.Fatalf("verify.Check: %v %q, figures %v against the job's %v", err, rep.GetProblems(), rep.GetSensitive(), s)
	}

	iv, err := matrix.NewVocab(matrix.ValuesIntegers, [][]byte{matrix.IntNameKey(nil, -3), matrix.IntNameKey(nil, 1<<40)})
	if err != nil {
		t.Fatal(err)
	}
	ints := matrix.New(0, 0)
	for i := range 8 {
		ints.Append("u"+itoa(uint32(i)), []uint32{uint32(i % 2)})
	}
	intIn := filepath.Join(dir, "ints.parquet")
	if err := matrix.WriteMatrix(intIn, ints, matrix.WriterOptions{Vocab: iv}); err != nil {
		t.Fatal(err)
	}
	p = Params{Input: intIn, Output: filepath.Join(dir, "ints"), Solver: solver.Params{K: 2, Seed: 1}, Sensitive: parseList(t, []string{"/health"})}
	var ie *InputError
	if _, err := Run(context.Background(), p); !errors.As(err, &ie) || !strings.Contains(err.Error(), `"/health" is not an integer`) {
		t.Fatalf("a string listed for integer features: %v, want an InputError", err)
	}
}

// checkSensitiveTable checks that the feature table at path marks exactly
// the features named in listed as sensitive, and that their entries add
// up to the report's sensitive figures s.
func checkSensitiveTable(t *testing.T, path string, listed []string, s *smoothanonpb.SensitiveFigures) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := verify.FeatureTableHeader + "," + verify.SensitiveColumn; strings.Join(rows[0], ",") != want {
		t.Fatalf("header %q, want %q", rows[0], want)
	}
	var held, released, marked int64
	for _, r := range rows[1:] {
		on := slices.Contains(listed, r[0])
		if (r[5] == "1") != on || (r[5] != "0" && r[5] != "1") {
			t.Fatalf("feature %q marked %q, listed %v", r[0], r[5], on)
		}
		if on {
			h, _ := strconv.ParseInt(r[1], 10, 64)
			rel, _ := strconv.ParseInt(r[2], 10, 64)
			held, released, marked = held+h, released+rel, marked+1
		}
	}
	if marked == 0 || held != s.Held || released != s.Released {
		t.Errorf("table: %d sensitive features, held %d, released %d; report %v", marked, held, released, s)
	}
}
