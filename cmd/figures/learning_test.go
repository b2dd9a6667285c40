package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// TestAUC: mid-ranks over tied scores, against pairs counted by hand.
func TestAUC(t *testing.T) {
	// Rows 0..3: pos pairs (0,1) Jaccard 1 and (0,2) 1/3; neg pairs (2,3)
	// 1/3 (a tie: half) and (1,3) 0.
	r := matrix.New(0, 0)
	r.Append("a", []uint32{1, 2})
	r.Append("b", []uint32{1, 2})
	r.Append("c", []uint32{2, 3})
	r.Append("d", []uint32{3, 4})
	pos := []pair{{0, 1}, {0, 2}}
	neg := []pair{{2, 3}, {1, 3}}
	// pos 1 beats both negs (2), pos 1/3 ties one and beats one (1.5): 3.5/4.
	if got := auc(r, pos, neg); math.Abs(got-0.875) > 1e-12 {
		t.Errorf("auc %v, want 0.875", got)
	}
	if got := auc(r, neg, pos); math.Abs(got-0.125) > 1e-12 {
		t.Errorf("auc with the classes swapped %v, want 0.125", got)
	}
	empty := matrix.New(0, 0)
	for range 4 {
		empty.Append("x", nil)
	}
	if got := auc(empty, pos, neg); got != 0.5 {
		t.Errorf("auc of all-tied scores %v, want 0.5", got)
	}
}

// ringGraph is an undirected graph of n nodes named 10, 11, ... (ids not
// row numbers), each joined to its next three on a ring.
func ringGraph(n int) *matrix.Matrix {
	m := matrix.New(0, 0)
	for i := range n {
		var row []uint32
		for d := -3; d <= 3; d++ {
			if d != 0 {
				row = append(row, uint32(10+(i+d+n)%n))
			}
		}
		slices.Sort(row)
		m.Append(fmt.Sprint(10+i), row)
	}
	return m
}

// TestHoldOut: each held-out edge leaves both rows, nothing else does, and
// the non-edges are distinct rows that are not neighbours; the draw is a
// function of the seed.
func TestHoldOut(t *testing.T) {
	m := ringGraph(200)
	train, pos, neg, err := holdOut(m, 0.2, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(pos) < 80 || len(pos) > 160 || len(neg) != len(pos) {
		t.Fatalf("%d held out of 600 edges at share 0.2, %d non-edges", len(pos), len(neg))
	}
	if got, want := train.NumEntries(), m.NumEntries()-2*int64(len(pos)); got != want {
		t.Errorf("training graph has %d entries, want %d", got, want)
	}
	node := func(r int32) uint32 { return mustNode(m.Users[r]) }
	for _, e := range pos {
		if hasFeature(train.Row(int(e.u)), node(e.v)) || hasFeature(train.Row(int(e.v)), node(e.u)) {
			t.Errorf("held-out edge %v still in the training graph", e)
		}
		if !hasFeature(m.Row(int(e.u)), node(e.v)) {
			t.Errorf("held-out pair %v is not an edge", e)
		}
	}
	for _, e := range neg {
		if e.u == e.v || hasFeature(m.Row(int(e.u)), node(e.v)) {
			t.Errorf("non-edge %v is a loop or an edge", e)
		}
	}
	_, pos2, neg2, _ := holdOut(m, 0.2, 7)
	if fmt.Sprint(pos2, neg2) != fmt.Sprint(pos, neg) {
		t.Error("holdOut differs between two draws with one seed")
	}
	bad := matrix.New(0, 0)
	bad.Append("author-1", []uint32{2})
	if _, _, _, err := holdOut(bad, 0.1, 1); err == nil || !strings.Contains(err.Error(), "author-1") {
		t.Errorf("a user id that is no node id: err %v", err)
	}
}

// requireSklearn skips the test when python3 cannot import scikit-learn,
// or under CI fails it (.ci/run installs scripts/learn/requirements.txt).
func requireSklearn(t *testing.T) {
	t.Helper()
	if err := exec.Command("python3", "-c", "import sklearn, scipy, numpy").Run(); err != nil {
		msg := "learning test skipped: python3 cannot import scikit-learn (pip install -r scripts/learn/requirements.txt, as .ci/run does)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// labeled draws rows of 8 features out of 30 whose label is whether they
// hold feature 0 or 1: a model learns it from the rows as they are.
func labeled(n int, seed uint64) (*matrix.Matrix, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := matrix.New(0, 0)
	var ys []int
	for i := range n {
		var row []uint32
		for f := range uint32(30) {
			if rng.IntN(30) < 8 {
				row = append(row, f)
			}
		}
		y := 0
		if len(row) > 0 && row[0] <= 1 {
			y = 1
		}
		m.Append(fmt.Sprint(i), row)
		ys = append(ys, y)
	}
	return m, ys
}

// TestLearnOn runs the experiment's Go side and scripts/learn/learn.py on
// small labeled rows, then draws its figures from figures.json.
func TestLearnOn(t *testing.T) {
	requireSklearn(t)
	train, yTrain := labeled(4000, 1)
	test, yTest := labeled(1000, 2)
	p := params{learnKs: []int{2, 8}, learnSeeds: 2, epsilons: []float64{10, 1000}, python: "python3", learnScript: "../../scripts/learn/learn.py"}
	l, err := learnOn(train, test, yTrain, yTest, p, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if l.Original.Mean[0] < 0.9 {
		t.Errorf("accuracy on the rows as they are %.3f, want ≥ 0.9", l.Original.Mean[0])
	}
	if ones := majority(yTrain, yTest); ones != l.Majority || ones < 0.5 {
		t.Errorf("majority %.3f / %.3f", ones, l.Majority)
	}
	if len(l.Curves) != 3 || len(l.DP.Mean) != 2 || !strings.Contains(l.Model, "MLPClassifier") {
		t.Fatalf("learning %+v", l)
	}
	for _, c := range append(l.Curves, l.DP) {
		for j := range c.Mean {
			if !(c.Mean[j] > 0.3 && c.Mean[j] <= 1) || c.CI95[j] < 0 {
				t.Errorf("%s point %d: accuracy %.3f ± %.3f", c.Method, j, c.Mean[j], c.CI95[j])
			}
		}
	}
	// At ε = 1000 node randomized response keeps nearly every entry.
	if d := l.DP.Mean[1]; d < l.Original.Mean[0]-0.05 {
		t.Errorf("node DP at ε = 1000: accuracy %.3f, far below the original %.3f", d, l.Original.Mean[0])
	}

	dir := t.TempDir()
	l.Links = &links{HeldOut: 10, Seeds: 2, Ks: []int{2, 8}, Original: 0.9,
		Curves: []learnCurve{{Method: methodSmooth, Mean: []float64{0.8, 0.7}, SD: []float64{0, 0}, CI95: []float64{0.01, 0.02}}}}
	b, err := json.Marshal(results{Learning: l})
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
	for _, name := range []string{"learning-adult.png", "learning-dp.png", "learning-links.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		_, err = png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestTrainAllRefuses: a script that fails, or reports no accuracy for a
// job, stops the experiment with an error naming it.
func TestTrainAllRefuses(t *testing.T) {
	dir := t.TempDir()
	spec := learnSpec{Jobs: []learnJob{{ID: "smooth k=2/1"}}}
	for name, body := range map[string]string{
		"silent.py": `import json, sys; json.dump({"model": "m", "accuracy": {}}, open(sys.argv[2], "w"))`,
		"fails.py":  `import sys; sys.exit("no sklearn")`,
	} {
		script := filepath.Join(dir, name)
		if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := trainAll("python3", script, t.TempDir(), spec, io.Discard)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err %v, want one naming the script", name, err)
		}
		if name == "silent.py" && !strings.Contains(err.Error(), "smooth k=2/1") {
			t.Errorf("%s: err %v, want it to name the job", name, err)
		}
	}
}

func TestTQuantile(t *testing.T) {
	for df, want := range map[int]float64{0: 0, 1: 12.706, 9: 2.262, 30: 2.042, 200: 1.96} {
		if got := tQuantile975(df); got != want {
			t.Errorf("t(0.975, %d) = %v, want %v", df, got, want)
		}
	}
}
