package experiment

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

func tiny() *matrix.Matrix {
	m := matrix.New(0, 0)
	m.Append("a", []uint32{1, 2})
	m.Append("b", []uint32{1, 3})
	m.Append("c", []uint32{4})
	m.Append("d", []uint32{4, 5})
	return m
}

// TestCheckedRejects: a release that is not k-anonymous is an
// InvalidError naming the method, never a report.
func TestCheckedRejects(t *testing.T) {
	m := tiny()
	rep, err := checked("identity", m, m, &verify.Params{K: 2, Mode: matrix.Smooth})
	var ie *InvalidError
	if !errors.As(err, &ie) || ie.Method != "identity" || len(ie.Problems) == 0 || rep != nil {
		t.Fatalf("identity release at k = 2: report %v, error %v; want an InvalidError", rep, err)
	}
}

// TestSolveVerified: a solver release comes back with its verified report.
func TestSolveVerified(t *testing.T) {
	o, err := Solve(context.Background(), tiny(), solver.Params{K: 2, Mode: matrix.Smooth, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Report.Valid || o.Report.Jaccard <= 0 || o.Clusters < 1 {
		t.Errorf("report valid %v, Jaccard %v, clusters %d", o.Report.Valid, o.Report.Jaccard, o.Clusters)
	}
}

// TestDensity is entries over rows × distinct features: 7 / (4 × 5).
func TestDensity(t *testing.T) {
	if d := Density(tiny()); math.Abs(d-7.0/20) > 1e-12 {
		t.Errorf("density %v, want 0.35", d)
	}
}

// TestWriteFile replaces the file whole and leaves no temporary behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "doc.md")
	for _, text := range []string{"first\n", "second\n"} {
		if err := WriteFile(p, []byte(text)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != text {
			t.Fatalf("read %q, %v; want %q", b, err, text)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d files in the directory, want 1", len(es))
	}
	if err := WriteFile(filepath.Join(dir, "absent", "x"), nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// TestMissing names the absent file of a real data set, never the SBM's.
func TestMissing(t *testing.T) {
	s := Source{Raw: t.TempDir()}
	if f, err := s.Missing("adult"); err != nil || filepath.Base(f) != "adult.data.gz" {
		t.Errorf("adult: %q, %v", f, err)
	}
	if f, err := s.Missing(SBM); err != nil || f != "" {
		t.Errorf("sbm: %q, %v", f, err)
	}
	if _, err := s.Missing("nope"); err == nil {
		t.Error("unknown data set accepted")
	}
}
