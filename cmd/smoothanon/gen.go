package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
)

func init() {
	register(command{
		name:  "gen",
		short: "generate synthetic data (sbm, userlists) as Parquet",
		run:   runGen,
	})
}

// Flags that only one model uses; --rows and --seed serve both.
var genModelFlags = map[string][]string{
	"sbm":       {"block", "q", "p"},
	"userlists": {"columns", "mean_degree", "zipf"},
}

func runGen(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("gen", stderr)
	model := fs.String("model", "sbm", "generator: sbm (the paper's bipartite stochastic block model) or userlists (power-law interest lists)")
	output := fs.String("output", "", "output Parquet file, written atomically (required)")
	seed := fs.Int64("seed", 1, "random seed")
	rows := fs.Int64("rows", 0, "rows: sbm users = features N (default 1024), userlists users (default 100000)")
	block := fs.Int("block", 64, "sbm: block size S, must divide --rows")
	q := fs.Float64("q", 0.8, "sbm: edge probability inside a block")
	p := fs.Float64("p", 0.01, "sbm: edge probability between blocks")
	columns := fs.Int("columns", 100000, "userlists: number of feature ids")
	meanDegree := fs.Float64("mean_degree", 10, "userlists: mean number of feature draws per user (at least 1)")
	zipf := fs.Float64("zipf", 1.1, "userlists: Zipf exponent of feature popularity (greater than 1)")
	shapeFlag := fs.String("shape", "list", "output shape: list (user_id, features: one row per user) or long (user_id, feature INT64: one row per pair; users without features have none)")
	names := fs.Bool("feature_names", false, "write each feature as a string name, /interest/ and its id in 10 digits (so names sort as ids), not as its integer id")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	shape, err := matrix.ParseShape(*shapeFlag)
	if err != nil || shape == matrix.ShapeAuto {
		return usageErr("--shape %q: want list or long", *shapeFlag)
	}
	opts := matrix.WriterOptions{Shape: shape}
	if *names {
		n := *columns
		if *model == "sbm" {
			n = int(max(*rows, 1024))
		}
		opts.Vocab = interestNames(n)
	}
	if _, ok := genModelFlags[*model]; !ok {
		return usageErr("--model %q: want sbm or userlists", *model)
	}
	if *output == "" {
		return usageErr("missing --output")
	}
	var stray []string
	fs.Visit(func(f *flag.Flag) {
		for m, names := range genModelFlags {
			for _, n := range names {
				if m != *model && f.Name == n {
					stray = append(stray, "--"+n)
				}
			}
		}
	})
	if len(stray) > 0 {
		return usageErr("%s not used by --model %s", strings.Join(stray, ", "), *model)
	}
	if *rows < 0 {
		return usageErr("--rows = %d, must be positive", *rows)
	}

	switch *model {
	case "sbm":
		if *rows == 0 {
			*rows = 1024
		}
		if *rows > 1<<32 {
			return usageErr("--rows = %d, must be at most 2^32", *rows)
		}
		sp := gen.SBMParams{N: int(*rows), S: *block, Q: *q, P: *p, Seed: *seed}
		if err := gen.CheckSBMParams(sp); err != nil {
			return usageErr("%v", err)
		}
		m, err := gen.SBM(sp)
		if err != nil {
			return usageErr("%v", err)
		}
		if err := matrix.WriteMatrix(*output, m, opts); err != nil {
			return inputErr(err)
		}
		fmt.Fprintf(stderr, "smoothanon gen: sbm N=%d S=%d q=%g p=%g seed=%d: %d users, %d entries (expected %.0f), %s form -> %s\n",
			sp.N, sp.S, sp.Q, sp.P, sp.Seed, m.NumRows(), m.NumEntries(), gen.SBMExpectedEntries(sp), shape, *output)
	case "userlists":
		if *rows == 0 {
			*rows = 100000
		}
		up := gen.UserListsParams{Rows: *rows, Columns: *columns, MeanDegree: *meanDegree, Zipf: *zipf, Seed: *seed}
		if err := gen.CheckUserListsParams(up); err != nil {
			return usageErr("%v", err)
		}
		w, err := matrix.Create(*output, opts)
		if err != nil {
			return inputErr(err)
		}
		if err := gen.UserLists(w, up); err != nil {
			w.Abort()
			return inputErr(err)
		}
		if err := w.Close(); err != nil {
			return inputErr(err)
		}
		fmt.Fprintf(stderr, "smoothanon gen: userlists rows=%d columns=%d mean_degree=%g zipf=%g seed=%d: %d users, %s form -> %s\n",
			up.Rows, up.Columns, up.MeanDegree, up.Zipf, up.Seed, w.Rows(), shape, *output)
	}
	return nil
}

// interestNames is the vocabulary naming feature i "/interest/" and i in
// 10 digits, for i < n.
func interestNames(n int) *matrix.Vocab {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "/interest/%010d", i)
	}
	v, err := matrix.NewVocab(matrix.ValuesStrings, keys)
	if err != nil {
		panic(err) // the names are distinct
	}
	return v
}
