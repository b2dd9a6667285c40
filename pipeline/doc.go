// Package pipeline runs smoothanon's Beam batch pipeline: [Run] checks
// the [Params] and the input, claims the output ([release.Begin]), runs
// the job that [Build] assembles from package transforms into the run's
// staging directory, and publishes the release if the job's report says
// it verified ([release.Run.Finish]). [DryRun] prints the job instead.
//
// The release is a pure function of (the set of input rows, Params): the
// same bytes on every runner, across re-runs and retried bundles, and
// whatever the order of the input files.
//
// # Settings
//
// A chunk's solve gets its settings from Params.Solver, a [solver.Params]
// carried whole into the job graph (transforms.SolveParams) and checked
// once, by [CheckParams], when Run starts. A new solver setting is a
// field of solver.Params; the CLI's flag for it is one line in
// cmd/smoothanon's solverFlags. Params' other fields are the pipeline's
// own: chunking, pools, shards, runner, outputs.
//
// # Stages
//
// The job's stages are the top-level transforms of the graph, in this
// order (TestDocStages builds the graph for each optional stage's switch
// and compares its top-level transforms with this list):
//
//   - BuildVocab, when the features are names: the distinct names of the
//     input, sorted, written into the staging directory as the
//     vocabulary Read, GroupPairs and Write number and name features by
//     ([transforms.BuildVocab]).
//   - Read, when the input is list form: the input files, each row group
//     a unit of work, into blocks of rows ([transforms.Read]).
//   - GroupPairs, when the input is long form: the input files' pairs,
//     each row group a unit of work, grouped by user in a shuffle into
//     the blocks of rows Read makes of list form, repeated pairs dropped
//     ([transforms.GroupPairs]).
//   - Pseudonymize, when Params.PseudonymKey is set: every user id
//     replaced by its pseudonym before anything is keyed, sorted or
//     sharded by it ([transforms.Pseudonymize]).
//   - Signature: each row's chunk sort key, led by Params.Key; the
//     spectral key runs its averaging rounds in a nested Spectral scope
//     ([transforms.Signature]).
//   - Chunk: a deterministic range partition of the rows by their sort
//     key into chunks of about Params.ChunkSize rows; with the spectral
//     key a Sharpen round first moves rows across boundaries
//     ([transforms.Chunk]).
//   - Solve: the solver on every chunk, with Params.Solver seeded per
//     chunk; the worst-served clusters set aside for Pool
//     ([transforms.Solve]).
//   - Pool, when Params.PoolShare > 0: the set-aside rows of neighbouring
//     chunks solved again together, kept where that raises the Jaccard
//     ([transforms.Pool]).
//   - Verify: the whole release checked for k-anonymity (and, smooth,
//     the majority rule; with Params.Sensitive, the sensitive
//     rule), and its utility counted ([transforms.Verify]).
//   - Accounting: every feature's input entries, release entries,
//     suppressed and created entries, combined by blocks of feature ids
//     and summarized for the report; with Params.FeatureTable, the full
//     table written into the staging directory ([transforms.Accounting]).
//   - Write: the released rows as sharded Parquet files in the staging
//     directory ([transforms.Write]).
//   - CountRows: the rows read, for the report ([transforms.CountRows]).
//   - CombineStats: the statistics of every stage merged into one
//     ([transforms.CombineStats]).
//   - Report: the verdict, the run report and the list of shards written
//     into the staging directory. The job publishes nothing
//     ([transforms.Report]).
//
// After the job, the launcher reads the report and, if the release
// verified, publishes the staged shards under the _SUCCESS manifest
// ([release.Run.Finish]); when the job fails or the release does not
// verify, nothing is published.
//
// [Risk] runs another job on the same runners, for `assess --exact`: the
// input read (and its names numbered) as above, then [transforms.Risk];
// it releases nothing.
package pipeline
