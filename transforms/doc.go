// Package transforms holds the composite Beam transforms of smoothanon's
// batch pipeline. Package pipeline applies them in order (its doc lists
// the job's stages, pinned to the graph by a test); each can be applied
// on its own, as its examples and tests do.
//
// Each transform is a function of a beam.Scope, its input PCollections
// and, where it has settings, an XParams struct whose fields are
// documented Required, Optional or Default. It applies its steps in a
// scope named after itself, and checks its params when it is applied:
// bad params panic, a programming error, since pipeline.CheckParams
// reports them first.
//
// # Transforms
//
//   - [BuildVocab]: the named features of Parquet files to their sorted
//     vocabulary, written as a file, and PCollection<VocabRef> naming it,
//     the side input Read and GroupPairs number names by.
//   - [Read]: Parquet files, each row group a unit of work, into a
//     PCollection<matrix.Matrix> of blocks of rows.
//   - [GroupPairs]: long-form Parquet files, one (user, feature) pair
//     per row, grouped by user in a shuffle into the PCollection of
//     blocks of rows that Read makes of list form.
//   - [Pseudonymize]: blocks of rows to blocks whose user ids are
//     pseudonyms under [PseudonymizeParams].Key.
//   - [Signature]: blocks of rows to PCollection<KeyedBlock>, each row
//     with its leading sort key ([Key]; KeySpectral in a nested Spectral
//     scope).
//   - [Chunk]: keyed blocks to PCollection<KV<int64, ChunkBlock>>, a
//     deterministic range partition of the rows into chunks, keyed by
//     chunk (ChunkParams.Sharpen in a nested Sharpen scope).
//   - [Solve]: chunks to three collections: the released rows
//     PCollection<OutBlock>, the rows set aside for Pool
//     PCollection<KV<int64, PoolBlock>>, and one [ChunkStat] per chunk.
//     [SolveParams].Solver is the solver.Params of every chunk.
//   - [Pool]: Solve's three outputs to the release of every row,
//     PCollection<OutBlock>, and one [Stats] per pool.
//   - [Verify]: released rows to PCollection<Stats>: class sizes, the
//     majority rule, the sensitive rule ([SensitiveRule]), kept,
//     suppressed and created entries.
//   - [Accounting]: released rows to PCollection<Stats> summarizing
//     every feature's held, released, suppressed and created entries
//     (verify.FeatureSummary), and optionally the full per-feature table
//     as a file.
//   - [Write]: released rows to sharded Parquet files in a directory, and
//     PCollection<Stats> naming the shards written.
//   - [CountRows]: blocks of rows to PCollection<Stats> counting them.
//   - [CombineStats]: any number of PCollection<Stats>, and the chunks'
//     ChunkStats, to a single Stats.
//   - [Report]: that Stats to the run report and shard list in the
//     staging directory; no output. It publishes nothing: the launcher
//     does (release.Run.Finish).
//   - [Risk]: blocks of rows to the exact risk of every row ([RiskCounts]:
//     shared and unique feature sets, the features exposing unique rows),
//     written as a file; no output. Not part of a run: `assess --exact`
//     applies it after Read or GroupPairs (pipeline.Risk).
//
// Around them: [ChooseKey] resolves KeyAuto from a sample before the
// graph is built; [CheckSolveParams] and [CheckPoolShare] are the checks
// pipeline.CheckParams shares; [ChunkSeed] and [PoolSeed] are the solver
// seeds of a chunk and a pool; [JobInputError] finds, in a failed job's
// error, the one-line input or storage error a worker reported.
//
// # Elements
//
// Rows travel in blocks of up to [MaxBlockRows] rows and [MaxBlockEntries]
// entries (block.go), and every element type has a compact binary coder,
// so rows cross shuffles as varint-encoded bytes rather than one reflected
// element each. The rows every transform emits are a pure function of the
// set of its input rows and its params, whatever the bundling, the order
// of elements or the retries of the runner; only the timings in its
// statistics vary.
package transforms
