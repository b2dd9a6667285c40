package baseline

import (
	"context"
	"fmt"
	"time"

	"github.com/smoothanon/smoothanon/internal/mondrian"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/verify"
)

// MondrianParams configure Mondrian.
type MondrianParams struct {
	// K is the smallest partition size. Required; at least 1 and at most
	// the number of rows.
	K int
}

// CheckMondrianParams reports the first bad parameter for an input of rows
// rows.
func CheckMondrianParams(p MondrianParams, rows int) error {
	if p.K < 1 {
		return fmt.Errorf("k = %d, must be at least 1", p.K)
	}
	if rows < 0 || rows > 1<<31-1 {
		return fmt.Errorf("%d rows: unsupported input size", rows)
	}
	if p.K > rows {
		return fmt.Errorf("k = %d is larger than the number of rows (%d)", p.K, rows)
	}
	return nil
}

// Result is a baseline's release.
type Result struct {
	// Release holds the same users as the input, in the same row order.
	Release *matrix.Matrix
	// Partition is the Mondrian partition of each row (input order),
	// numbered by their first user in user-id order (so the numbers do not
	// depend on the input row order either); nil for randomized response.
	Partition []int32
	// Info describes the run.
	Info *smoothanonpb.BaselineInfo
}

// Mondrian is LeFevre et al.'s strict multidimensional partitioning on the
// binary columns of m: starting from all rows, a partition is cut on the
// feature held by a number of its rows closest to half (ties: the lower
// feature id), holders on one side and the others on the other, as long as
// both sides keep at least k rows; a partition no feature can cut is
// final, and its rows are released as the features all of them hold. This
// is Mondrian's median cut on the widest dimension: every binary column
// that varies in a partition spans both values, and the cut closest to
// half is the median one. (The paper ran an open-source implementation
// that picks the first such column instead.)
//
// The release is k-anonymous by suppression (matrix.NonSmooth) and does not
// depend on the input row order. After a cut only the smaller side's rows
// are counted again (see internal/mondrian), so even on sparse graphs,
// where most cuts peel a few rows off a large partition, the counting is
// O(entries · log n) updates of O(log n) each, where counting every
// partition afresh would be quadratic on them. m is not modified.
func Mondrian(ctx context.Context, m *matrix.Matrix, p MondrianParams) (*Result, error) {
	start := time.Now()
	if err := m.Validate(); err != nil {
		return nil, err
	}
	n := m.NumRows()
	if err := CheckMondrianParams(p, n); err != nil {
		return nil, err
	}
	byUser, err := matrix.UserOrder(m)
	if err != nil {
		return nil, err
	}
	k := p.K

	part, common, columns, err := mondrian.Partition(ctx, m, k)
	if err != nil {
		return nil, err
	}

	// Number the partitions by first user and write the release.
	renum := make([]int32, len(common))
	for i := range renum {
		renum[i] = -1
	}
	next := int32(0)
	for _, r := range byUser {
		if renum[part[r]] < 0 {
			renum[part[r]] = next
			next++
		}
	}
	out := matrix.New(n, 0)
	sizes := make([]int64, len(common))
	for i := 0; i < n; i++ {
		out.Append(m.Users[i], common[part[i]])
		part[i] = renum[part[i]]
		sizes[part[i]]++
	}
	info := &smoothanonpb.BaselineInfo{
		Method:        "mondrian",
		K:             int32(k),
		Columns:       int64(columns),
		Partitions:    int64(len(common)),
		PartitionSize: verify.Summarize(sizes),
		Seconds:       time.Since(start).Seconds(),
	}
	return &Result{Release: out, Partition: part, Info: info}, nil
}
