// Command quality prints the solver's quality table (k = 8, mean ± sd over
// seeds) as Markdown.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/importer"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

func main() {
	ds := flag.String("dataset", "adult", "")
	mode := flag.String("mode", "smooth", "")
	variant := flag.String("variant", "improved", "")
	seed := flag.Int64("seed", 1, "")
	flag.Parse()
	raw := filepath.Join("..", "shared", "data", "raw")
	var m *matrix.Matrix
	var err error
	switch *ds {
	case "adult":
		m, _, err = importer.Import("adult", filepath.Join(raw, "adult.data.gz"), importer.Options{})
	case "playstore":
		m, _, err = importer.Import("playstore", filepath.Join(raw, "googleplaystore.csv.gz"), importer.Options{})
	case "dblp":
		m, _, err = importer.Import("edges", filepath.Join(raw, "com-dblp.ungraph.noheader.txt.gz"), importer.Options{Undirected: true})
	case "sbm":
		m, err = gen.SBM(gen.PaperSBM(*seed))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	md, _ := verify.ParseMode(*mode)
	v, _ := solver.ParseVariant(*variant)
	t := time.Now()
	res, err := solver.Solve(context.Background(), m, solver.Params{K: 8, Mode: md, Seed: *seed, Variant: v,
		Progress: func(s string, d, tot int) {
			fmt.Fprintf(os.Stderr, "%.2fs %s %d/%d\n", time.Since(t).Seconds(), s, d, tot)
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	el := time.Since(t)
	rep, _ := verify.Check(m, res.Release, verify.Params{K: 8, Mode: md})
	fmt.Printf("%s %s %s rows=%d valid=%v jac=%.4f sup=%.4f cre=%.4f clusters=%d mean=%.1f max=%d fc=%.0f %.2fs %v\n", *ds, *mode, *variant, m.NumRows(), rep.Valid, rep.Jaccard, rep.SuppressedFraction, rep.CreatedFraction, res.Info.Clusters, res.Info.ClusterSize.Mean, res.Info.ClusterSize.Max, res.Info.FacilityCost, el.Seconds(), rep.Problems)
}
