package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// Level is the unit randomized response protects.
type Level int

const (
	// Edge protects one (user, feature) cell: ε-edge differential privacy.
	Edge Level = iota
	// Node protects a user's whole row: ε-node differential privacy.
	Node
)

// String returns "edge" or "node".
func (l Level) String() string {
	switch l {
	case Edge:
		return "edge"
	case Node:
		return "node"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Method is the name BaselineInfo gives the level: "rr_edge" or "rr_node".
func (l Level) Method() string { return "rr_" + l.String() }

// ErrTooLarge is wrapped by the error of a randomized response release
// expected to exceed RRParams.MaxEntries entries.
var ErrTooLarge = errors.New("release too large")

// DefaultMaxEntries bounds the expected size of a randomized response
// release unless RRParams.MaxEntries says otherwise.
const DefaultMaxEntries = 100_000_000

// RRParams configure RandomizedResponse.
type RRParams struct {
	// Epsilon is the privacy parameter. Required; positive and finite.
	Epsilon float64
	// Level is what is protected. Optional; default Edge.
	Level Level
	// Seed seeds the coins. Optional; default 0.
	Seed int64
	// MaxEntries bounds the expected number of output entries: with small
	// ε the release is a dense random table of about rows × columns / 2
	// entries. Optional; default DefaultMaxEntries (0 means default).
	MaxEntries int64
}

// CheckRRParams reports the first bad parameter.
func CheckRRParams(p RRParams) error {
	if !(p.Epsilon > 0) || math.IsInf(p.Epsilon, 0) {
		return fmt.Errorf("epsilon = %v, must be positive and finite", p.Epsilon)
	}
	if p.Level != Edge && p.Level != Node {
		return fmt.Errorf("invalid level %d (want edge or node)", int(p.Level))
	}
	if p.MaxEntries < 0 {
		return fmt.Errorf("max entries = %d, must be at least 0 (0 means the default %d)", p.MaxEntries, int64(DefaultMaxEntries))
	}
	return nil
}

// FlipProbability is p, the chance that a cell is replaced by a fair coin:
// 2/(1+e^ε) for Edge, 2/(1+e^(ε/columns)) for Node.
func FlipProbability(epsilon float64, level Level, columns int) float64 {
	e := epsilon
	if level == Node {
		e /= float64(max(columns, 1))
	}
	return 2 / (1 + math.Exp(e))
}

// ExpectedEntries is the expected number of entries of a randomized
// response release of a table with rows × columns cells, entries of them
// set, at flip probability p: a set cell stays set with probability 1−p/2,
// an empty one becomes set with probability p/2.
func ExpectedEntries(rows, columns int, entries int64, p float64) float64 {
	cells := float64(rows) * float64(columns)
	return float64(entries)*(1-p/2) + (cells-float64(entries))*p/2
}

// RandomizedResponse is the paper's randomized response (its Algorithm
// "Randomized response") over the users × features table of m, the features
// being the distinct features of m: every cell is, with probability p
// (FlipProbability), set by a fair coin, and otherwise kept. Each row has
// its own random stream from (Seed, row index), so the release depends only
// on m's rows in their order and the params. Empty cells are drawn by
// geometric skips, so the work follows the output, not the table; a
// release expected to exceed MaxEntries entries is refused. m is not
// modified.
func RandomizedResponse(ctx context.Context, m *matrix.Matrix, p RRParams) (*Result, error) {
	start := time.Now()
	if err := CheckRRParams(p); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if _, err := matrix.UserOrder(m); err != nil {
		return nil, err
	}
	n := m.NumRows()
	cols := m.Columns()
	prob := FlipProbability(p.Epsilon, p.Level, len(cols))
	limit := p.MaxEntries
	if limit == 0 {
		limit = DefaultMaxEntries
	}
	if e := ExpectedEntries(n, len(cols), m.NumEntries(), prob); e > float64(limit) {
		return nil, fmt.Errorf("randomized response at epsilon = %v (%s level, p = %.4g) over %d rows × %d columns would release about %.3g entries, above the limit of %d: %w",
			p.Epsilon, p.Level, prob, n, len(cols), e, limit, ErrTooLarge)
	}
	q := prob / 2 // chance a cell ends up flipped: p, then the coin disagrees
	logKeep := math.Log1p(-q)
	out := matrix.New(n, int(m.NumEntries()))
	var buf []uint32
	for i := 0; i < n; i++ {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		r := rand.New(rand.NewPCG(uint64(p.Seed), uint64(i)))
		row := m.Row(i)
		buf = buf[:0]
		// Every cell ends up differing from the input with probability
		// q = p/2 (a set cell is cleared, an empty one set), independently:
		// walk the columns in geometric skips between such cells, merging
		// the row's own cells, which are kept unless the walk lands on them.
		nc := len(cols)
		next := skip(r, logKeep, nc) // index into cols of the next flipped cell
		j := 0                       // next cell of row
		for j < len(row) || next < len(cols) {
			switch {
			case j < len(row) && (next >= len(cols) || row[j] < cols[next]):
				buf = append(buf, row[j]) // not flipped: kept
				j++
			case j < len(row) && row[j] == cols[next]:
				j++ // flipped: cleared
				next += 1 + skip(r, logKeep, nc)
			default:
				buf = append(buf, cols[next]) // flipped: created
				next += 1 + skip(r, logKeep, nc)
			}
		}
		out.Append(m.Users[i], buf)
	}
	info := &smoothanonpb.BaselineInfo{
		Method:          p.Level.Method(),
		Epsilon:         p.Epsilon,
		FlipProbability: prob,
		Seed:            p.Seed,
		Columns:         int64(len(cols)),
		Seconds:         time.Since(start).Seconds(),
	}
	return &Result{Release: out, Info: info}, nil
}

// skip draws the number of cells before the next success of independent
// trials whose failure has log-probability logKeep (geometric, from 0),
// capped at limit (any count from limit on ends the walk over limit cells).
func skip(r *rand.Rand, logKeep float64, limit int) int {
	if logKeep == 0 {
		return limit // no chance of success
	}
	u := 1 - r.Float64() // in (0, 1]
	if s := math.Floor(math.Log(u) / logKeep); s < float64(limit) {
		return int(s)
	}
	return limit
}
