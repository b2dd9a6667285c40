package pipeline

import (
	"fmt"
	"strings"
)

// flinkSortRecord is how Flink's batch sorter refuses a record larger than
// its sort buffer.
const flinkSortRecord = "exceeds the maximum size of a sort buffer"

// runnerHint is a line telling the user what to change after a runner
// failure it recognises, or "". On Flink, Beam's batch GroupByKey turns a
// key's values within a partition into one sort record; Write bounds its
// groups itself, so a record too large is most likely a partition's share
// of a chunk's rows (see docs/flink-cluster.md).
func runnerHint(err error, chunkSize int64) string {
	if err == nil || !strings.Contains(err.Error(), flinkSortRecord) {
		return ""
	}
	return fmt.Sprintf("\nhint: a grouped record, most likely a partition's share of a chunk (up to about 1.6 × --chunk_size=%d rows), did not fit one Flink sort buffer, "+
		"about 1/37 of a slot's managed memory: lower --chunk_size or raise taskmanager.memory.managed.size (docs/flink-cluster.md)", chunkSize)
}
