package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
)

// tinySBM is two draws of a 64-row SBM: small enough for -short.
func tinySBM(t *testing.T) []*matrix.Matrix {
	t.Helper()
	var ms []*matrix.Matrix
	for seed := int64(1); seed <= 2; seed++ {
		m, err := gen.SBM(gen.SBMParams{N: 64, S: 8, Q: 0.8, P: 0.05, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// TestSmoke measures a tiny SBM, writes its figures.json and draws every
// figure from it through the command line (-replot), then decodes each PNG.
func TestSmoke(t *testing.T) {
	ms := tinySBM(t)
	s, err := measureMatrices("sbm", ms, []int{2, 4}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Curves) != 3 || len(s.EpsilonAtK) != 2 || len(s.EpsilonAtJaccard) != len(jaccardLevels) {
		t.Fatalf("measured %d curves, %d ε at k, %d ε at Jaccard", len(s.Curves), len(s.EpsilonAtK), len(s.EpsilonAtJaccard))
	}
	for _, c := range s.Curves {
		for _, j := range c.Mean {
			if !(j > 0 && j <= 1) {
				t.Errorf("%s: Jaccard %v outside (0, 1]", c.Method, j)
			}
		}
	}
	// The ε found for k = 2 gives randomized response the smooth Jaccard.
	got, err := rrJaccard(ms)(s.EpsilonAtK[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := s.Curves[0].Mean[0]; math.Abs(got-want) > 0.03 {
		t.Errorf("randomized response at ε %.3f: Jaccard %.4f, want the smooth %.4f", s.EpsilonAtK[0], got, want)
	}
	dir := t.TempDir()
	res := results{Ks: s.Ks, Seeds: 2, Sets: []setResult{s}, Chunks: &chunkSweep{
		ChunkSizes: []int{100, 200}, Chunks: []int64{2, 1}, Jaccard: []float64{0.5, 0.6}, Seconds: []float64{1, 1}, Whole: 0.6}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "figures.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"-out", dir, "-replot"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, name := range []string{"jaccard-k-sbm.png", "k-epsilon.png", "epsilon-density.png", "dblp-chunks.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 300 {
			t.Errorf("%s: %v, want at least 500×300 pixels", name, b)
		}
		if !strings.Contains(stdout.String(), name) {
			t.Errorf("stdout does not name %s: %q", name, stdout.String())
		}
	}
}

// TestBoundEpsilon: the theorem's main term at boundEpsilon(J, λ) is J.
func TestBoundEpsilon(t *testing.T) {
	for _, lambda := range []float64{2.09e-5, 0.019, 0.078} {
		for _, j := range jaccardLevels {
			q := 1 / (math.Exp(boundEpsilon(j, lambda)) + 1)
			if got := (1 - q) / (1 + q*(1-lambda)/lambda); math.Abs(got-j) > 1e-9 {
				t.Errorf("λ %g, J %g: main term %g", lambda, j, got)
			}
		}
	}
	// The paper: density 1e-4 needs ε above 10 for Jaccard above 0.5... at
	// least 9 from the main term alone.
	if e := boundEpsilon(0.5, 1e-4); e < 9 {
		t.Errorf("ε for Jaccard 0.5 at density 1e-4 = %.2f, want ≥ 9", e)
	}
}

// TestBadUsage: bad flag values exit 2 with a message naming the value.
func TestBadUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", dir, "-seeds", "0"}, "-seeds = 0"},
		{[]string{"-out", dir, "-ks", "2,1"}, `"1"`},
		{[]string{"-out", dir, "-chunks", "10"}, `"10"`},
		{[]string{"-out", dir, "-datasets", "nope"}, `"nope"`},
		{[]string{"-out", filepath.Join(dir, "absent")}, "absent"},
		{[]string{"-out", dir, "-replot"}, "figures.json"},
		{[]string{"-out", dir, "-learning", "-learning_seeds", "1"}, "-learning_seeds = 1"},
		{[]string{"-out", dir, "-learning", "-epsilons", "1,100"}, "-epsilons must hold 10"},
		{[]string{"-out", dir, "-epsilons", "10,-1"}, `"-1"`},
		{[]string{"-out", dir, "-learning_ks", "1,2"}, `"1"`},
		{[]string{"-out", dir, "-link_seeds", "-1"}, "-link_seeds = -1"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runMain(c.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}
