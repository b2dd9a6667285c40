// Command figures draws the paper's evaluation figures from this code
// base's methods and writes them as PNGs (make figures; see
// docs/figures.md):
//
//   - jaccard-k-<data set>.png: Jaccard vs k for smooth, nonsmooth (the
//     improved solver) and Mondrian, with the paper's k = 8 points (its
//     Figures 2 and 5 and the k = 8 tables);
//   - k-epsilon.png: for each k, the ε at which ε-edge randomized response
//     reaches the smooth release's Jaccard (the paper's Figure 6);
//   - epsilon-density.png: the ε randomized response needs for a Jaccard,
//     as a function of the density, from the paper's theorem, with the ε
//     measured on our data sets (the paper's Figure 1);
//   - dblp-chunks.png: the pipeline's Jaccard on dblp vs chunk size against
//     the whole-data solve (-pipeline=false skips it and keeps the old PNG);
//   - learning-adult.png, learning-dp.png, learning-links.png: the paper's
//     "Learning from anonymous data" (its Figures ml-kanon and ml-dp) and a
//     link prediction on dblp, measured only with -learning (make
//     figures-learning); otherwise drawn from figures.json.
//
// Seeds are fixed: the real data sets are solved with seed 1, the SBM is
// drawn and solved with seeds 1..-seeds and averaged. Every k-anonymous
// release passes verify.Check before it is plotted; an invalid one stops
// the program with exit code 1. The measured values are also written to
// figures.json beside the PNGs.
//
// Usage (from the repository root):
//
//	go run ./cmd/figures [-out docs/figures] [-raw ../shared/data/raw] [-datasets adult,sbm,dblp,playstore]
//	    [-ks 2,4,8,16,32,64] [-seeds 5] [-pipeline=true] [-chunks 25000,50000,100000,200000,320000]
//	    [-reuse] [-replot] [-learning [-python python3] [-learning_ks ...] [-learning_seeds 10]
//	    [-epsilons 1,10,30,100,300,1000] [-link_seeds 3]]
//
// -replot redraws every figure from figures.json without measuring (to
// change a picture, not a number). -reuse measures only -datasets and
// takes the other data sets' values from figures.json (to refresh one
// slow data set); without it every figure shows only this run's data sets.
//
// Exit codes: 0 written, 1 a failed measurement, 2 bad usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/smoothanon/smoothanon/internal/beamtest"
	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/internal/experiment"
	"github.com/smoothanon/smoothanon/pipeline"
)

// usageError is a bad flag value: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func main() {
	pipeline.MaybeRunWorker()
	// Beam's loopback runner leaves files in TMPDIR: give it a fresh one
	// that is removed at the end.
	os.Exit(beamtest.Main(func() int { return runMain(os.Args[1:], os.Stdout, os.Stderr) }))
}

// runMain parses args, measures and draws; it returns the exit code.
func runMain(args []string, stdout, stderr io.Writer) int {
	p, err := parse(args, stderr)
	if err == nil {
		err = run(p, stdout, stderr)
	}
	var ue *usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue), errors.Is(err, errFlags):
		if ue != nil {
			fmt.Fprintln(stderr, "figures:", err)
		}
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "figures:", err)
		return 1
	}
	return 0
}

// errFlags is a flag the flag package already reported.
var errFlags = errors.New("bad flags")

// parse reads the flags into params.
func parse(args []string, stderr io.Writer) (params, error) {
	fs := flag.NewFlagSet("figures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "docs/figures", "directory of the PNGs and figures.json")
	raw := fs.String("raw", datasets.Dir(), "directory of the raw data sets (default $SMOOTHANON_DATA or ../shared/data/raw beside the module)")
	names := fs.String("datasets", strings.Join(experiment.Names, ","), "comma list of data sets")
	ks := fs.String("ks", "2,4,8,16,32,64", "comma list of k values")
	seeds := fs.Int("seeds", 5, "SBM draws (seeds 1..N) averaged; the real data sets use seed 1")
	pipe := fs.Bool("pipeline", true, "run the dblp chunk-size sweep through the pipeline (slow)")
	replot := fs.Bool("replot", false, "draw the figures from the figures.json in -out without measuring")
	reuse := fs.Bool("reuse", false, "keep the data sets of the figures.json in -out that -datasets leaves out")
	chunks := fs.String("chunks", "25000,50000,100000,200000,320000", "comma list of chunk sizes of the pipeline sweep")
	learn := fs.Bool("learning", false, "run the learning experiment (adult classifier, dblp link prediction; slow, needs -python with scikit-learn)")
	learnKs := fs.String("learning_ks", "2,4,8,16,32,64,128,200", "comma list of k values of the learning experiment")
	learnSeeds := fs.Int("learning_seeds", 10, "seeds per point of the adult classifier (anonymization and model)")
	epsilons := fs.String("epsilons", "1,10,30,100,300,1000", "comma list of ε values of node DP in the learning experiment (must hold 10)")
	linkSeeds := fs.Int("link_seeds", 3, "solver seeds per point of the dblp link prediction (0 skips it)")
	python := fs.String("python", "python3", "python with scikit-learn for -learning")
	script := fs.String("learn_script", "scripts/learn/learn.py", "the classifier script of -learning")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return params{}, err
		}
		return params{}, errFlags
	}
	if fs.NArg() > 0 {
		return params{}, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	p := params{out: *out, raw: *raw, names: nonEmpty(strings.Split(*names, ",")), seeds: *seeds, pipeline: *pipe, replot: *replot, reuse: *reuse,
		learning: *learn, learnSeeds: *learnSeeds, linkSeeds: *linkSeeds, python: *python, learnScript: *script}
	var err error
	if p.learnKs, err = ints("-learning_ks", *learnKs, 2); err != nil {
		return p, err
	}
	if p.epsilons, err = floats("-epsilons", *epsilons); err != nil {
		return p, err
	}
	if p.ks, err = ints("-ks", *ks, 2); err != nil {
		return p, err
	}
	if p.chunks, err = ints("-chunks", *chunks, 2*pipelineK); err != nil {
		return p, err
	}
	return p, p.check()
}

// ints parses a comma list of integers, each at least min.
func ints(flagName, s string, min int) ([]int, error) {
	var xs []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || x < min {
			return nil, &usageError{fmt.Sprintf("%s: %q is not an integer ≥ %d", flagName, f, min)}
		}
		xs = append(xs, x)
	}
	return xs, nil
}

// floats parses a comma list of positive finite numbers.
func floats(flagName, s string) ([]float64, error) {
	var xs []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return nil, &usageError{fmt.Sprintf("%s: %q is not a positive number", flagName, f)}
		}
		xs = append(xs, x)
	}
	return xs, nil
}

// nonEmpty drops the empty strings of xs: -datasets "" names none (with
// -reuse, to run only the chunk sweep).
func nonEmpty(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
