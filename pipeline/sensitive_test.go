package pipeline

import (
	"context"
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
// fifth feature of m and sensitiveFeature, shown in classes of sk.
func sensitiveParams(t *testing.T, m *matrix.Matrix, files []string, out string, sk int) (Params, *sensitive.List) {
	var lines []string
	for _, f := range slices.Compact(slices.Sorted(slices.Values(m.Features))) {
		if f%5 == 0 {
			lines = append(lines, itoa(f))
		}
	}
	lines = append(lines, itoa(sensitiveFeature))
	l, err := sensitive.Parse(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	sp := solver.Params{K: 4, Seed: 1, SensitiveK: sk}
	if sp.Sensitive, err = l.IDs(); err != nil {
		t.Fatal(err)
	}
	return Params{Input: strings.Join(files, ","), Output: out, Solver: sp, ChunkSize: 100,
		SensitiveRecord: sensitive.NewRecord(l, sp).String(), SensitiveListed: int64(len(l.Entries))}, l
}

func itoa(f uint32) string { return strconv.FormatUint(uint64(f), 10) }

// TestSensitiveRun: a run under a sensitive list publishes a release that
// follows the rule (verify.Check finds it valid with the list), records
// the list in every file, and counts the sensitive entries in its report.
func TestSensitiveRun(t *testing.T) {
	dir := t.TempDir()
	m, files := writeInput(t, dir, gen.SBMParams{N: 300, S: 30, Q: 0.5, P: 0.01, Seed: 2})
	p, _ := sensitiveParams(t, m, files, filepath.Join(dir, "out"), 8)
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Report.GetSensitive()
	if s == nil || s.Held == 0 || s.Created != 0 || s.Violations != 0 || s.SensitiveK != 8 || s.Held != s.Released+s.Suppressed {
		t.Fatalf("sensitive figures %v", s)
	}
	rel, err := matrix.OpenRelease(p.Output, matrix.ReleaseOptions{VerifyChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Sensitive != p.SensitiveRecord {
		t.Fatalf("release records %q, want %q", rel.Sensitive, p.SensitiveRecord)
	}
	out, _ := readRelease(t, p.Output)
	rep, err := verify.Check(m, out, verify.Params{K: 4, Sensitive: p.Solver.Sensitive, SensitiveK: 8})
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

// TestSensitiveNamesRefused: run takes lists of ids only.
func TestSensitiveNamesRefused(t *testing.T) {
	dir := t.TempDir()
	m, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 200, Columns: 50, MeanDegree: 4, Zipf: 1.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.parquet")
	names := make([][]byte, 50)
	for i := range names {
		names[i] = []byte("/i/" + itoa(uint32(100+i)))
	}
	v, err := matrix.NewVocab(matrix.ValuesStrings, names)
	if err != nil {
		t.Fatal(err)
	}
	if err := matrix.WriteMatrix(in, m, matrix.WriterOptions{Vocab: v}); err != nil {
		t.Fatal(err)
	}
	p, _ := sensitiveParams(t, m, []string{in}, filepath.Join(dir, "out"), 4)
	var ie *InputError
	if _, err := Run(context.Background(), p); !errors.As(err, &ie) || !strings.Contains(err.Error(), "named features") {
		t.Fatalf("err %v, want an InputError about named features", err)
	}
}
