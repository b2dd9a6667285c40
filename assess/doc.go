// Package assess tells a data owner, before a run, how exposed the users
// of an input are and what each k will cost: [RiskOf] measures the rows'
// uniqueness, [Price] predicts the Jaccard, suppressed and created
// entries and class sizes of the release `smoothanon run` would make,
// with an interval, from a bounded sample of the input.
//
// Neither reads more than the rows it is given: the command reads the
// input's footers for its size and a sample of at most --sample_rows
// rows (docs/assess.md). The result is a pure function of the rows and
// the parameters. assess releases nothing; its figures describe private
// input data and are for the data owner.
package assess
