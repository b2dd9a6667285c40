package main

import (
	"flag"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

// choiceValue is a flag.Value checked by parse when it is set, so a bad
// value fails flag parsing (exit code 2) with the flag's name and the
// parser's message.
type choiceValue[T any] struct {
	v     *T
	text  string
	parse func(string) (T, error)
}

func (c *choiceValue[T]) String() string { return c.text }

func (c *choiceValue[T]) Set(s string) error {
	v, err := c.parse(s)
	if err != nil {
		return err
	}
	*c.v, c.text = v, s
	return nil
}

// choiceFlag defines a flag whose text is parsed into a T, starting at def.
func choiceFlag[T any](fs *flag.FlagSet, name, def string, parse func(string) (T, error), usage string) *T {
	c := &choiceValue[T]{v: new(T), parse: parse}
	if err := c.Set(def); err != nil {
		panic(err) // a bad default is a programming error
	}
	fs.Var(c, name, usage)
	return c.v
}

func modeFlag(fs *flag.FlagSet) *matrix.Mode {
	return choiceFlag(fs, "mode", "smooth", matrix.ParseMode, "smooth or nonsmooth")
}

func variantFlag(fs *flag.FlagSet) *solver.Variant {
	return choiceFlag(fs, "variant", "improved", solver.ParseVariant, "improved (Alg2 + split + refine) or paper (Alg2 as in the paper)")
}

func searchFlag(fs *flag.FlagSet) *solver.Search {
	return choiceFlag(fs, "search", "bounded", solver.ParseSearch, "neighbour search: bounded (at most a fixed number of index entries per query; the time per row stays flat on dense data, and is exact where the bound is not reached) or exact")
}

// startUsage describes the starts of solver.Start for --start.
const startUsage = "both (Meyerson's clusters and the Mondrian partition; the better release is kept) or mondrian (the Mondrian partition only, without Meyerson: on lists without community structure the same quality in about half the time)"

func startFlag(fs *flag.FlagSet) *solver.Start {
	return choiceFlag(fs, "start", "both", solver.ParseStart, "what the improved solver starts from: "+startUsage)
}

// startChoice is --start of run: a solver.Start, or auto.
type startChoice struct {
	start solver.Start
	auto  bool
}

func parseStartChoice(s string) (startChoice, error) {
	st, auto, err := pipeline.ParseStart(s)
	return startChoice{start: st, auto: auto}, err
}

func runStartFlag(fs *flag.FlagSet) *startChoice {
	return choiceFlag(fs, "start", "auto", parseStartChoice, "what the improved solver starts from: auto (mondrian where the sample --chunk_key auto reads lacks community structure, else both), "+startUsage)
}

func dedupeFlag(fs *flag.FlagSet, usage string) *matrix.DedupePolicy {
	return choiceFlag(fs, "dedupe", "refuse", matrix.ParseDedupePolicy, usage)
}

func chunkKeyFlag(fs *flag.FlagSet) *transforms.Key {
	return choiceFlag(fs, "chunk_key", "auto", transforms.ParseKey, "what leads the chunk sort order: auto (spectral or hub, chosen from a sample of the input: hub when the sampled spectral coordinate sits on a few rows, as on lists without community structure), spectral (a smoothed coordinate that keeps communities in one chunk, for graph-like data; per iteration one pass over the rows and a shuffle of per-bundle feature sums), hub (the row's most frequent feature: better for lists without community structure), two_hop (two-hop MinHash) or minhash (plain MinHash, no extra pass)")
}
