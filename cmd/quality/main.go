// Command quality measures the solver and the paper's baselines on the
// paper's data sets and writes the quality document (docs/quality.md): a
// headline table (one row per data set: smooth, nonsmooth and Mondrian
// Jaccard at k against the paper's) and the full table — for every data
// set, solver variant (improved, paper) and mode (smooth, nonsmooth), and
// for Mondrian (k-anonymity by suppression) and randomized response at
// ε = 10 (edge and node level), the mean ± standard deviation over seeds of
// the Jaccard similarity, the suppressed and created fractions (over the
// input entries), the number of clusters and the time the method took
// (verification excluded). Every k-anonymous release is checked with
// verify.Check (randomized response, which claims no k, with
// verify.Measure); an invalid one aborts the run. For the SBM it also
// tables, per seed, the improved smooth Jaccard beside the block oracle's:
// the generator's true blocks as clusters, released under the majority
// rule.
//
// Usage (from the repository root; make quality):
//
//	go run ./cmd/quality [-seeds 10] [-k 8] [-datasets adult,sbm,dblp,playstore] [-raw ../shared/data/raw] [-out docs/quality.md]
//
// Without -out the document goes to standard output. Seeds are 1..N. The
// SBM data set is the paper's (n = 1024, s = 64, q = 0.8, p = 0.01), drawn
// afresh with each seed (gen.PaperSBM(seed)). Data sets whose raw file is
// missing are listed as skipped. Exit codes: 0 written, 1 a failed
// measurement (such as an invalid release), 2 bad usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/smoothanon/smoothanon/internal/datasets"
)

// usageError is a bad flag value: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain parses args, measures and writes the document; it returns the
// exit code.
func runMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("quality", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", 10, "number of seeds (1..N)")
	k := fs.Int("k", 8, "anonymity parameter")
	names := fs.String("datasets", "adult,sbm,dblp,playstore", "comma list of data sets")
	raw := fs.String("raw", datasets.Dir(), "directory of the raw data sets (default $SMOOTHANON_DATA or ../shared/data/raw beside the module)")
	out := fs.String("out", "", "file to write the document to (default standard output)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quality: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	p := params{seeds: *seeds, k: *k, names: strings.Split(*names, ","), raw: *raw}
	err := write(p, *out, stdout, stderr)
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "quality:", err)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "quality:", err)
		return 1
	}
	return 0
}
