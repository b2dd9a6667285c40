package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

// choiceValue is a flag.Value checked by set when it is set, so a bad
// value fails flag parsing (exit code 2) with the flag's name and the
// parser's message.
type choiceValue struct {
	text string
	set  func(string) error
}

func (c *choiceValue) String() string { return c.text }

func (c *choiceValue) Set(s string) error {
	if err := c.set(s); err != nil {
		return err
	}
	c.text = s
	return nil
}

// choiceFunc defines a flag set by set, starting at def.
func choiceFunc(fs *flag.FlagSet, name, def string, set func(string) error, usage string) {
	c := &choiceValue{set: set}
	if err := c.Set(def); err != nil {
		panic(err) // a bad default is a programming error
	}
	fs.Var(c, name, usage)
}

// choiceVar defines a flag whose text is parsed into *p, starting at def.
func choiceVar[T any](fs *flag.FlagSet, p *T, name, def string, parse func(string) (T, error), usage string) {
	choiceFunc(fs, name, def, func(s string) error {
		v, err := parse(s)
		if err == nil {
			*p = v
		}
		return err
	}, usage)
}

// choiceFlag defines a flag whose text is parsed into a T, starting at def.
func choiceFlag[T any](fs *flag.FlagSet, name, def string, parse func(string) (T, error), usage string) *T {
	p := new(T)
	choiceVar(fs, p, name, def, parse, usage)
	return p
}

// minInt is an int flag that refuses values below min.
type minInt struct {
	p   *int
	min int
}

func (m minInt) String() string {
	if m.p == nil {
		return "0"
	}
	return strconv.Itoa(*m.p)
}

func (m minInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return errors.New("not an integer")
	case v < m.min:
		return fmt.Errorf("must be at least %d", m.min)
	}
	*m.p = v
	return nil
}

// Type names the flag's value in -h (printFlag).
func (m minInt) Type() string { return "int" }

// minIntVar defines an int flag of at least min, starting at def.
func minIntVar(fs *flag.FlagSet, p *int, name string, def, min int, usage string) {
	*p = def
	fs.Var(minInt{p: p, min: min}, name, usage)
}

// solverFlags defines the flags of the solver.Params fields that cmd
// takes and returns the Params they fill: all of them for "run" and
// "solve"; --k (mondrian) and --seed (randomized response) for
// "baseline". For "run" --start also takes auto, which sets autoStart
// (pipeline.Params.AutoStart). --k and --mode are in the Privacy group of
// -h, the others in the Solver group (baseline's --seed in Randomized
// response). Adding a solver setting is a field of solver.Params and one
// line here.
func solverFlags(g *groupedFlags, cmd string) (p *solver.Params, autoStart *bool) {
	p, autoStart = new(solver.Params), new(bool)
	fs := g.FlagSet
	run, baseline := cmd == "run" || cmd == "assess", cmd == "baseline"
	g.in(groupPrivacy)
	if baseline {
		fs.IntVar(&p.K, "k", 0, "mondrian: smallest partition size (at least 2)")
		g.in(groupRR)
		fs.Int64Var(&p.Seed, "seed", 0, "rr_*: random seed; same input and seed give the same release")
		return p, autoStart
	}
	if cmd != "assess" { // assess prices a list of k and modes
		fs.IntVar(&p.K, "k", 0, "smallest class size (required, at least 2)")
		choiceVar(fs, &p.Mode, "mode", "smooth", matrix.ParseMode, modeUsage)
	}
	g.in(groupSolver)
	fs.Int64Var(&p.Seed, "seed", 0, pick(run, "random seed; same input, seed and chunk size give the same release on every runner",
		"random seed; same input and seed give the same release"))
	choiceVar(fs, &p.Variant, "variant", "improved", solver.ParseVariant, "improved (Alg2 + split + refine) or paper (Alg2 as in the paper)")
	choiceVar(fs, &p.Search, "search", "bounded", solver.ParseSearch, "neighbour search: bounded (at most a fixed number of index entries per query; the time per row stays flat on dense data, and is exact where the bound is not reached) or exact")
	if run {
		choiceFunc(fs, "start", "auto", func(s string) error {
			st, auto, err := pipeline.ParseStart(s)
			if err == nil {
				p.Start, *autoStart = st, auto
			}
			return err
		}, "what the improved solver starts from: auto (mondrian where the sample --chunk_key auto reads lacks community structure, else both), "+startUsage)
	} else {
		choiceVar(fs, &p.Start, "start", "both", solver.ParseStart, "what the improved solver starts from: "+startUsage)
	}
	minIntVar(fs, &p.Beta, "beta", solver.DefaultBeta, 1, "the facility cost uses the beta·k nearest users, alpha = 1/beta (at least 1)")
	minIntVar(fs, &p.Restarts, "restarts", solver.DefaultRestarts, 1, pick(run, "random orders of Meyerson's algorithm per chunk (at least 1)",
		"random orders of Meyerson's algorithm (at least 1)"))
	minIntVar(fs, &p.Workers, "workers", 0, 0, pick(run, "solver goroutines per chunk (0 = GOMAXPROCS, or 1 under --start mondrian: chunks then solve side by side); does not change the release",
		"goroutines (0 = GOMAXPROCS); does not change the result"))
	return p, autoStart
}

// pick is a if cond, else b.
func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

const modeUsage = "smooth or nonsmooth"

func modeFlag(fs *flag.FlagSet) *matrix.Mode {
	return choiceFlag(fs, "mode", "smooth", matrix.ParseMode, modeUsage)
}

// startUsage describes the starts of solver.Start for --start.
const startUsage = "both (Meyerson's clusters and the Mondrian partition; the better release is kept) or mondrian (the Mondrian partition only, without Meyerson: on lists without community structure the same quality in about half the time)"

func dedupeFlag(fs *flag.FlagSet, usage string) *matrix.DedupePolicy {
	return choiceFlag(fs, "dedupe", "refuse", matrix.ParseDedupePolicy, usage)
}

func chunkKeyFlag(fs *flag.FlagSet) *transforms.Key {
	return choiceFlag(fs, "chunk_key", "auto", transforms.ParseKey, "what leads the chunk sort order: auto (spectral or hub, chosen from a sample of the input: hub when the sampled spectral coordinate sits on a few rows, as on lists without community structure), spectral (a smoothed coordinate that keeps communities in one chunk, for graph-like data; per iteration one pass over the rows and a shuffle of per-bundle feature sums), hub (the row's most frequent feature: better for lists without community structure), two_hop (two-hop MinHash) or minhash (plain MinHash, no extra pass)")
}

// layoutFlags defines --input_shape, --user_column, --feature_column and
// --feature_values, which fill the input's matrix.Layout.
func layoutFlags(fs *flag.FlagSet) *matrix.Layout {
	l := new(matrix.Layout)
	choiceVar(fs, &l.Shape, "input_shape", "auto", matrix.ParseShape,
		"auto (from the schema: a list feature column is list form, a scalar one long form), list (one row per user) or long (one row per user and feature; a user without features cannot appear)")
	fs.StringVar(&l.User, "user_column", matrix.ColUserID, "the input's user id column (a string)")
	fs.StringVar(&l.Feature, "feature_column", "", "the input's feature column (default "+matrix.ColFeatures+" in list form, "+matrix.ColFeature+" in long form)")
	choiceVar(fs, &l.Values, "feature_values", "auto", matrix.ParseValues,
		"auto (a string feature column holds names, an integer one ids), ids (integers in [0, 2^32), used as they are) or names (strings or integers of any magnitude, numbered by a sorted dictionary of the input's distinct values; the release carries the names back, strings as strings, integers as INT64)")
	return l
}

// outputShapeFlag defines --output_shape: the release's matrix.Shape.
func outputShapeFlag(fs *flag.FlagSet) *matrix.Shape {
	return choiceFlag(fs, "output_shape", "list", parseOutputShape,
		"list (one row per user, its released features in the list column "+matrix.ColFeatures+") or long (one row per released user and feature, columns "+matrix.ColUserID+" and "+matrix.ColFeature+", as a long warehouse table: a user released without features has no row; the manifest counts the users)")
}

func parseOutputShape(s string) (matrix.Shape, error) {
	switch s {
	case "list":
		return matrix.ShapeList, nil
	case "long":
		return matrix.ShapeLong, nil
	}
	return 0, fmt.Errorf("invalid output shape %q (want list or long)", s)
}

// flagSet says whether name was given on fs's command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
