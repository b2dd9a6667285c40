package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/smoothanon/smoothanon/baseline"
	"github.com/smoothanon/smoothanon/importer"
	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/internal/experiment"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
)

// The learning experiment (the paper's appendix "Learning from anonymous
// data", Figures ml-kanon and ml-dp): adult's features are anonymized, its
// income label is not; a classifier trained on the anonymized training rows
// is scored on the original test rows. The model: record 028.
const (
	learnSet = "adult"
	// learnTestEvery splits adult.data: record i (0-based, blank lines not
	// counted) is a test row when i % learnTestEvery == learnTestEvery−1.
	learnTestEvery = 5
	// learnEpsilon is the ε of the node-DP line of the k figure.
	learnEpsilon = 10
	// methodNodeDP names ε-node randomized response.
	methodNodeDP = "node DP"
)

// learnCurve is a method's test accuracy (or AUC) at each point, over the
// seeds: mean, sample standard deviation and the half-width of the mean's
// 95% confidence interval (Student's t with seeds−1 degrees of freedom).
type learnCurve struct {
	Method string    `json:"method"`
	Mean   []float64 `json:"mean"`
	SD     []float64 `json:"sd"`
	CI95   []float64 `json:"ci95"`
}

// learning is what the learning experiment measures.
type learning struct {
	Split     string  `json:"split"`
	TrainRows int     `json:"train_rows"`
	TestRows  int     `json:"test_rows"`
	Model     string  `json:"model"`
	Seeds     int     `json:"seeds"`
	Ks        []int   `json:"ks"`
	Majority  float64 `json:"majority"`
	// Original is the model trained on the training rows as they are (one
	// point, over the seeds).
	Original learnCurve `json:"original"`
	// Curves are smooth, non-smooth and Mondrian at each k.
	Curves []learnCurve `json:"curves"`
	// Epsilons and DP: ε-node randomized response at each ε.
	Epsilons []float64  `json:"epsilons"`
	DP       learnCurve `json:"node_dp"`
	Links    *links     `json:"links,omitempty"`
}

// learnJob is one classifier to train: a release of the training rows and
// the seed of the model's initialization.
type learnJob struct {
	ID   string `json:"id"`
	Rows string `json:"rows"`
	Seed int64  `json:"seed"`
}

// learnSpec is what scripts/learn/learn.py reads.
type learnSpec struct {
	Columns    int        `json:"columns"`
	Labels     string     `json:"labels"`
	TestRows   string     `json:"test_rows"`
	TestLabels string     `json:"test_labels"`
	Jobs       []learnJob `json:"jobs"`
}

// learnOutput is what scripts/learn/learn.py writes.
type learnOutput struct {
	Model    string             `json:"model"`
	Accuracy map[string]float64 `json:"accuracy"`
}

// measureLearning runs the learning experiment on adult (p.raw) and, with
// p.linkSeeds, the link prediction on dblp.
func measureLearning(p params, log io.Writer) (*learning, error) {
	set, err := datasets.Get(learnSet)
	if err != nil {
		return nil, err
	}
	m, st, err := importer.Import(set.Format, filepath.Join(p.raw, set.File), set.Opts)
	if err != nil {
		return nil, fmt.Errorf("data set %s: %w", learnSet, err)
	}
	train, test, yTrain, yTest := splitAdult(m, st.Labels)
	l, err := learnOn(train, test, yTrain, yTest, p, log)
	if err != nil {
		return nil, err
	}
	l.Split = fmt.Sprintf("adult.data record i is a test row when i mod %d = %d, else a training row", learnTestEvery, learnTestEvery-1)
	if p.linkSeeds > 0 {
		if l.Links, err = measureLinks(p, log); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// learnOn anonymizes train with every method, parameter and seed of p,
// trains a classifier on each release and the labels yTrain, and scores
// it on test and yTest.
func learnOn(train, test *matrix.Matrix, yTrain, yTest []int, p params, log io.Writer) (*learning, error) {
	dir, err := os.MkdirTemp("", "smoothanon-learning-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	l := &learning{TrainRows: train.NumRows(), TestRows: test.NumRows(), Seeds: p.learnSeeds, Ks: p.learnKs, Epsilons: p.epsilons,
		Majority: majority(yTrain, yTest)}
	spec := learnSpec{Columns: max(maxFeature(train), maxFeature(test)) + 1, Labels: filepath.Join(dir, "train.labels"),
		TestRows: filepath.Join(dir, "test.rows"), TestLabels: filepath.Join(dir, "test.labels")}
	for path, data := range map[string][]byte{spec.Labels: labelLines(yTrain), spec.TestLabels: labelLines(yTest), spec.TestRows: rowLines(test)} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	if spec.Jobs, err = releaseJobs(context.Background(), train, p, dir, log); err != nil {
		return nil, err
	}
	out, err := trainAll(p.python, p.learnScript, dir, spec, log)
	if err != nil {
		return nil, err
	}
	l.Model = out.Model
	acc := func(id string) float64 { return out.Accuracy[id] }
	l.Original = seedCurve("original", []string{"original"}, p.learnSeeds, acc)
	for _, md := range []string{methodSmooth, methodNonSmooth, methodMondrian} {
		l.Curves = append(l.Curves, seedCurve(md, pointIDs(md, "k", intsF(p.learnKs)), p.learnSeeds, acc))
	}
	l.DP = seedCurve(methodNodeDP, pointIDs(methodNodeDP, "eps", p.epsilons), p.learnSeeds, acc)
	for _, c := range l.Curves {
		for j, k := range l.Ks {
			fmt.Fprintf(log, "learning %s k=%d: accuracy %.4f ± %.4f\n", c.Method, k, c.Mean[j], c.CI95[j])
		}
	}
	for j, eps := range l.Epsilons {
		fmt.Fprintf(log, "learning %s ε=%g: accuracy %.4f ± %.4f\n", methodNodeDP, eps, l.DP.Mean[j], l.DP.CI95[j])
	}
	fmt.Fprintf(log, "learning: original %.4f ± %.4f, majority %.4f\n", l.Original.Mean[0], l.Original.CI95[0], l.Majority)
	return l, nil
}

// splitAdult splits adult's rows (record order) into training and test rows
// and their labels (1 for income above 50K).
func splitAdult(m *matrix.Matrix, labels []string) (train, test *matrix.Matrix, yTrain, yTest []int) {
	train, test = matrix.New(0, 0), matrix.New(0, 0)
	for i := range m.NumRows() {
		y := 0
		if strings.HasPrefix(labels[i], ">50K") {
			y = 1
		}
		if i%learnTestEvery == learnTestEvery-1 {
			test.Append(m.Users[i], m.Row(i))
			yTest = append(yTest, y)
		} else {
			train.Append(m.Users[i], m.Row(i))
			yTrain = append(yTrain, y)
		}
	}
	return train, test, yTrain, yTest
}

// majority is the test accuracy of always predicting the training rows'
// most frequent label.
func majority(yTrain, yTest []int) float64 {
	ones := 0
	for _, y := range yTrain {
		ones += y
	}
	guess := 0
	if 2*ones > len(yTrain) {
		guess = 1
	}
	hit := 0
	for _, y := range yTest {
		if y == guess {
			hit++
		}
	}
	return float64(hit) / float64(len(yTest))
}

// releaseJobs anonymizes the training rows with every method, parameter and
// seed (each release verified), writes each release's rows to dir and
// returns the classifiers to train on them.
func releaseJobs(ctx context.Context, train *matrix.Matrix, p params, dir string, log io.Writer) ([]learnJob, error) {
	var jobs []learnJob
	add := func(id string, seed int64, o experiment.Outcome) error {
		if !slices.Equal(o.Release.Users, train.Users) {
			return fmt.Errorf("%s: the release does not hold the training rows in their order", id)
		}
		path := filepath.Join(dir, fmt.Sprintf("%s.%d.rows", id, seed))
		if err := os.WriteFile(path, rowLines(o.Release), 0o600); err != nil {
			return err
		}
		jobs = append(jobs, learnJob{ID: fmt.Sprintf("%s/%d", id, seed), Rows: path, Seed: seed})
		return nil
	}
	for seed := int64(1); seed <= int64(p.learnSeeds); seed++ {
		if err := add("original", seed, experiment.Outcome{Release: train}); err != nil {
			return nil, err
		}
		for _, k := range p.learnKs {
			for _, md := range []struct {
				name string
				mode matrix.Mode
			}{{methodSmooth, matrix.Smooth}, {methodNonSmooth, matrix.NonSmooth}} {
				o, err := experiment.Solve(ctx, train, solver.Params{K: k, Mode: md.mode, Seed: seed})
				if err != nil {
					return nil, fmt.Errorf("learning %s k=%d seed %d: %w", md.name, k, seed, err)
				}
				if err := add(pointID(md.name, "k", float64(k)), seed, o); err != nil {
					return nil, err
				}
			}
			o, err := experiment.Mondrian(ctx, train, k) // deterministic: only the model's seed varies
			if err != nil {
				return nil, fmt.Errorf("learning Mondrian k=%d: %w", k, err)
			}
			if err := add(pointID(methodMondrian, "k", float64(k)), seed, o); err != nil {
				return nil, err
			}
		}
		for _, eps := range p.epsilons {
			o, err := experiment.RandomizedResponse(ctx, train, baseline.RRParams{Epsilon: eps, Level: baseline.Node, Seed: seed})
			if err != nil {
				return nil, fmt.Errorf("learning node DP ε=%g seed %d: %w", eps, seed, err)
			}
			if err := add(pointID(methodNodeDP, "eps", eps), seed, o); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(log, "learning: releases of seed %d written\n", seed)
	}
	return jobs, nil
}

// pointID names a method's point: "smooth k=8", "node DP eps=10". A job's
// id adds "/seed".
func pointID(method, param string, v float64) string {
	return fmt.Sprintf("%s %s=%g", method, param, v)
}

// pointIDs is pointID at each of vs.
func pointIDs(method, param string, vs []float64) []string {
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = pointID(method, param, v)
	}
	return ids
}

// seedCurve averages acc over seeds 1..seeds at each point of ids.
func seedCurve(method string, ids []string, seeds int, acc func(string) float64) learnCurve {
	c := learnCurve{Method: method}
	for _, id := range ids {
		var s experiment.Stat
		for seed := 1; seed <= seeds; seed++ {
			s.Add(acc(fmt.Sprintf("%s/%d", id, seed)))
		}
		c.add(s)
	}
	return c
}

// add appends the point s: its mean, SD and 95% half-width.
func (c *learnCurve) add(s experiment.Stat) {
	c.Mean, c.SD = append(c.Mean, s.Mean()), append(c.SD, s.SD())
	c.CI95 = append(c.CI95, tQuantile975(s.N()-1)*s.SD()/math.Sqrt(float64(s.N())))
}

// tQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom (the normal's 1.96 beyond 30), 0 for df < 1.
func tQuantile975(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case df < 1:
		return 0
	case df <= len(table):
		return table[df-1]
	}
	return 1.96
}

// rowLines is m's rows, one line each: the feature ids separated by spaces.
func rowLines(m *matrix.Matrix) []byte {
	var b []byte
	for i := range m.NumRows() {
		for j, f := range m.Row(i) {
			if j > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendUint(b, uint64(f), 10)
		}
		b = append(b, '\n')
	}
	return b
}

// labelLines is one label a line.
func labelLines(ys []int) []byte {
	var b strings.Builder
	for _, y := range ys {
		fmt.Fprintln(&b, y)
	}
	return []byte(b.String())
}

func maxFeature(m *matrix.Matrix) int {
	mx := -1
	for _, f := range m.Features {
		mx = max(mx, int(f))
	}
	return mx
}

func intsF(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// trainAll runs scripts/learn/learn.py (p.learnScript) with p.python on spec and
// returns the test accuracy of every job.
func trainAll(python, script, dir string, spec learnSpec, log io.Writer) (learnOutput, error) {
	var out learnOutput
	b, err := json.Marshal(spec)
	if err != nil {
		return out, err
	}
	specPath, outPath := filepath.Join(dir, "spec.json"), filepath.Join(dir, "accuracy.json")
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		return out, err
	}
	cmd := exec.Command(python, script, specPath, outPath)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return out, fmt.Errorf("%s %s: %w (make figures-learning installs its packages)", python, script, err)
	}
	if b, err = os.ReadFile(outPath); err != nil {
		return out, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("%s: %w", outPath, err)
	}
	for _, j := range spec.Jobs {
		if _, ok := out.Accuracy[j.ID]; !ok {
			return out, fmt.Errorf("%s: no accuracy for %s", script, j.ID)
		}
	}
	return out, nil
}
