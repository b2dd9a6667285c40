package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/smoothanon/smoothanon/internal/experiment"
)

// params configure a run of the program.
type params struct {
	out      string   // Required: directory of the PNGs.
	raw      string   // Required: the real data sets' directory.
	names    []string // Required: data sets of experiment.Names.
	ks       []int    // Required: k values, each ≥ 2.
	seeds    int      // Required, ≥ 1: SBM draws averaged.
	pipeline bool     // Optional: run the dblp chunk-size sweep.
	chunks   []int    // Required with pipeline: chunk sizes, each ≥ 2·pipelineK.
	replot   bool     // Optional: draw from out/figures.json, measure nothing.
	reuse    bool     // Optional: keep out/figures.json's other data sets.
	// The learning experiment (learning.go), run when learning is set;
	// otherwise out/figures.json's values are kept.
	learning    bool      // Optional: run it (slow; needs python with scikit-learn).
	learnKs     []int     // Required with learning: k values, each ≥ 2.
	learnSeeds  int       // Required with learning, ≥ 2: seeds per point.
	epsilons    []float64 // Required with learning: ε values of node DP, each positive; learnEpsilon among them.
	linkSeeds   int       // Optional: solver seeds per link-prediction point; 0 skips it.
	python      string    // Required with learning: the python that runs learnScript.
	learnScript string    // Required with learning: scripts/learn/learn.py.
}

func (p params) check() error {
	if p.seeds < 1 {
		return &usageError{fmt.Sprintf("-seeds = %d, must be at least 1", p.seeds)}
	}
	for _, n := range p.names {
		if !slices.Contains(experiment.Names, n) {
			return &usageError{fmt.Sprintf("-datasets: unknown data set %q (want some of %v)", n, experiment.Names)}
		}
	}
	if p.learning && p.learnSeeds < 2 {
		return &usageError{fmt.Sprintf("-learning_seeds = %d, must be at least 2 (for a confidence interval)", p.learnSeeds)}
	}
	if p.learning && !slices.Contains(p.epsilons, learnEpsilon) {
		return &usageError{fmt.Sprintf("-epsilons must hold %d (the node-DP line of the k figure)", learnEpsilon)}
	}
	if p.linkSeeds < 0 {
		return &usageError{fmt.Sprintf("-link_seeds = %d, must be at least 0", p.linkSeeds)}
	}
	if st, err := os.Stat(p.out); err != nil || !st.IsDir() {
		return &usageError{fmt.Sprintf("-out %s: not a directory", p.out)}
	}
	return nil
}

// results is everything measured, as written to figures.json.
type results struct {
	Ks     []int       `json:"ks"`
	Seeds  int         `json:"sbm_seeds"`
	Sets   []setResult `json:"datasets"`
	Chunks *chunkSweep `json:"dblp_chunks,omitempty"`
	// Learning is the learning experiment (-learning), kept from the
	// previous figures.json when it is not run.
	Learning *learning `json:"learning,omitempty"`
}

// run measures (or with replot reads) the results, draws the figures and
// writes figures.json.
func run(p params, stdout, stderr io.Writer) error {
	jsonPath := filepath.Join(p.out, "figures.json")
	prev, err := readResults(jsonPath)
	if err != nil && (p.replot || p.reuse) {
		return &usageError{fmt.Sprintf("-replot/-reuse: %v", err)}
	}
	res := prev
	if !p.replot {
		if res, err = measure(p, prev, stderr); err != nil {
			return err
		}
	}
	if err := drawAll(res, p.out, stdout); err != nil {
		return err
	}
	if p.replot {
		return nil
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return experiment.WriteFile(jsonPath, append(b, '\n'))
}

// measure measures the data sets of p and, with p.pipeline, the chunk
// sweep. prev (may be empty) gives the data sets kept with p.reuse and the
// chunk sweep kept when it is not run.
func measure(p params, prev results, stderr io.Writer) (results, error) {
	src := experiment.Source{Raw: p.raw}
	res := results{Ks: p.ks, Seeds: p.seeds, Chunks: prev.Chunks, Learning: prev.Learning}
	for _, name := range experiment.Names {
		if !slices.Contains(p.names, name) {
			if i := slices.IndexFunc(prev.Sets, func(s setResult) bool { return s.Name == name }); p.reuse && i >= 0 {
				res.Sets = append(res.Sets, prev.Sets[i])
			}
			continue
		}
		missing, err := src.Missing(name)
		if err != nil {
			return res, err
		}
		if missing != "" {
			fmt.Fprintf(stderr, "figures: skipping %s: %s not found\n", name, missing)
			continue
		}
		s, err := measureSet(src, name, p, stderr)
		if err != nil {
			return res, err
		}
		res.Sets = append(res.Sets, s)
	}
	if p.learning {
		l, err := measureLearning(p, stderr)
		if err != nil {
			return res, err
		}
		res.Learning = l
	}
	if p.pipeline {
		sweep, err := sweepChunks(src, p, res.Sets, stderr)
		if err != nil {
			return res, err
		}
		if sweep != nil {
			res.Chunks = sweep
		}
	}
	return res, nil
}

// drawAll writes every figure res has the values for.
func drawAll(res results, dir string, stdout io.Writer) error {
	for _, s := range res.Sets {
		if err := save(drawJaccardK(s), filepath.Join(dir, "jaccard-k-"+s.Name+".png"), stdout); err != nil {
			return err
		}
	}
	if len(res.Sets) > 0 {
		if err := save(drawKEpsilon(res.Sets), filepath.Join(dir, "k-epsilon.png"), stdout); err != nil {
			return err
		}
		if err := save(drawEpsilonDensity(res.Sets), filepath.Join(dir, "epsilon-density.png"), stdout); err != nil {
			return err
		}
	}
	if res.Learning != nil {
		if err := drawLearningFigures(res.Learning, dir, stdout); err != nil {
			return err
		}
	}
	if res.Chunks != nil {
		return save(drawChunks(res.Chunks), filepath.Join(dir, "dblp-chunks.png"), stdout)
	}
	return nil
}

// readResults reads a figures.json; a missing file is empty results and an
// error.
func readResults(path string) (results, error) {
	var r results
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return results{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
