package transforms

import (
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/solver"
)

func TestCheckParams(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string // "" = valid
	}{
		{"chunk ok", checkChunkParams(ChunkParams{ChunkSize: 100, MinRows: 16, K: 8}), ""},
		{"chunk k", checkChunkParams(ChunkParams{ChunkSize: 100, MinRows: 16, K: 1}), "k=1"},
		{"chunk min rows", checkChunkParams(ChunkParams{ChunkSize: 100, MinRows: 4, K: 8}), "min rows 4"},
		{"chunk size", checkChunkParams(ChunkParams{ChunkSize: 10, MinRows: 16, K: 8}), "chunk size 10"},
		{"chunk samples", checkChunkParams(ChunkParams{ChunkSize: 100, MinRows: 16, K: 8, SamplesPerChunk: -1}), "samples per chunk -1"},
		{"write ok", checkWriteParams(WriteParams{Dir: "x", Rows: 1}), ""},
		{"write rows", checkWriteParams(WriteParams{Dir: "x"}), "0 rows"},
		{"write entries", checkWriteParams(WriteParams{Dir: "x", Rows: 1, MaxEntries: -1}), "at most -1 entries"},
		{"write dir", checkWriteParams(WriteParams{}), "no output directory"},
		{"write shards", checkWriteParams(WriteParams{Dir: "x", Rows: 1, Shards: -2}), "shards -2"},
		{"write per shard", checkWriteParams(WriteParams{Dir: "x", Rows: 1, RowsPerShard: -3}), "rows per shard -3"},
		{"write row groups", checkWriteParams(WriteParams{Dir: "x", Rows: 1, RowGroupRows: -4}), "row group rows -4"},
		{"write runs", checkWriteParams(WriteParams{Dir: "x", Rows: 1, RunEntries: -5}), "entries -5"},
		{"write bucket root", checkWriteParams(WriteParams{Dir: "gs://bkt/", Rows: 1}), "gs://bkt/ is a bucket root"},
		{"write bucket root scratch", checkWriteParams(WriteParams{Dir: "gs://bkt", Rows: 1, Scratch: "gs://bkt/tmp"}), ""},
		{"write bucket prefix", checkWriteParams(WriteParams{Dir: "s3://bkt/rel", Rows: 1}), ""},
		{"write scratch is dir", checkWriteParams(WriteParams{Dir: "a/rel", Rows: 1, Scratch: "a/rel/"}), "both a/rel"},
		{"verify ok", checkVerifyParams(VerifyParams{K: 2}), ""},
		{"verify k", checkVerifyParams(VerifyParams{K: 0}), "0"},
		{"report ok", checkReportParams(ReportParams{Staging: "s", K: 2}), ""},
		{"report staging", checkReportParams(ReportParams{K: 2}), "no staging"},
		{"report k", checkReportParams(ReportParams{Staging: "s", K: -1}), "-1"},
		{"solve ok", CheckSolveParams(SolveParams{Solver: solver.Params{K: 4}}), ""},
		{"solve k", CheckSolveParams(SolveParams{Solver: solver.Params{K: 1}}), "k >= 2"},
		{"solve workers", CheckSolveParams(SolveParams{Solver: solver.Params{K: 4, Workers: -1}}), "workers = -1"},
		{"solve search", CheckSolveParams(SolveParams{Solver: solver.Params{K: 4, Search: 9}}), "invalid search 9"},
		{"solve pool share", CheckSolveParams(SolveParams{Solver: solver.Params{K: 4}, PoolShare: 0.9}), "0.9"},
	}
	for _, c := range cases {
		if c.want == "" {
			if c.err != nil {
				t.Errorf("%s: %v", c.name, c.err)
			}
			continue
		}
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", c.name, c.err, c.want)
		}
	}
}
