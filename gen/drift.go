package gen

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
)

const streamDrift = 0x5b5b_0003

// DriftParams describe one night of drift of a user×feature matrix: every
// held feature is dropped with probability DropProb, and each user draws a
// Poisson(NewPerUser) number of new features from the UserLists popularity
// law (Zipf over Columns), so the population's interests change a little
// every night, as nightly releases see them.
type DriftParams struct {
	// Columns and Zipf are the popularity law of new features, as in
	// UserListsParams. Required; Columns in [1, 2^32], Zipf > 1.
	Columns int
	Zipf    float64
	// DropProb is the chance each held feature is dropped. Required; in [0, 1].
	DropProb float64
	// NewPerUser is the mean number of new feature draws per user.
	// Required; in [0, 1000].
	NewPerUser float64
	// Seed and Night select the drift: each (seed, night, user id) has its
	// own random stream, so a user's drift does not depend on row order or
	// on the other users. Optional; default 0.
	Seed, Night int64
}

// CheckDriftParams reports the first bad parameter.
func CheckDriftParams(p DriftParams) error {
	switch {
	case p.Columns < 1 || uint64(p.Columns) > 1<<32:
		return fmt.Errorf("drift: columns = %d, must be in [1, 2^32]", p.Columns)
	case !(p.Zipf > 1) || math.IsInf(p.Zipf, 0):
		return fmt.Errorf("drift: zipf exponent = %v, must be a number greater than 1", p.Zipf)
	case !(p.DropProb >= 0 && p.DropProb <= 1):
		return fmt.Errorf("drift: drop probability = %v, must be in [0, 1]", p.DropProb)
	case !(p.NewPerUser >= 0 && p.NewPerUser <= 1000):
		return fmt.Errorf("drift: new features per user = %v, must be in [0, 1000]", p.NewPerUser)
	}
	return nil
}

// Drift returns m after one night of drift (m is not changed). Rows keep
// their users and order.
func Drift(m *matrix.Matrix, p DriftParams) (*matrix.Matrix, error) {
	if err := CheckDriftParams(p); err != nil {
		return nil, err
	}
	src := &rand.PCG{}
	r := rand.New(src)
	zipf := rand.NewZipf(r, p.Zipf, 1, uint64(p.Columns-1))
	expNeg := math.Exp(-p.NewPerUser)
	out := matrix.New(m.NumRows(), int(m.NumEntries()))
	var row []uint32
	for i, u := range m.Users {
		seedRow(src, p.Seed, streamDrift^splitmix(uint64(p.Night)), int64(userStream(u)))
		row = row[:0]
		for _, f := range m.Row(i) {
			if r.Float64() >= p.DropProb {
				row = append(row, f)
			}
		}
		for n := poisson(r, expNeg); n > 0; n-- {
			row = append(row, uint32(zipf.Uint64()))
		}
		slices.Sort(row)
		out.Append(u, slices.Compact(row))
	}
	return out, nil
}

// userStream is a user's stream number: a hash of its id.
func userStream(u string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(u))
	return h.Sum64()
}

// poisson draws a Poisson variate of mean −ln(expNeg) by Knuth's product
// of uniforms (the means here are small).
func poisson(r *rand.Rand, expNeg float64) int {
	n := 0
	for prod := r.Float64(); prod > expNeg; prod *= r.Float64() {
		n++
	}
	return n
}
