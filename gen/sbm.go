package gen

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/smoothanon/smoothanon/matrix"
)

// SBMParams describe the paper's bipartite stochastic block model: N users
// and N features, each side cut into N/S blocks of S consecutive ids; user
// block b corresponds to feature block b. A user holds each feature of its
// own block with probability Q and every other feature with probability P,
// independently. The expected number of entries is N·(Q·S + P·(N−S)).
type SBMParams struct {
	// N is the number of users and of features. Required; 1 ≤ N ≤ 2^32.
	N int
	// S is the block size. Required; 1 ≤ S ≤ N and S divides N.
	S int
	// Q is the probability of an edge inside a block. Required; in [0, 1].
	Q float64
	// P is the probability of an edge between blocks. Required; in [0, 1].
	P float64
	// Seed selects the sample. Optional; default 0.
	Seed int64
}

// PaperSBM returns the paper's "stochastic" data set settings: N = 1024,
// S = 64, Q = 0.8, P = 0.01 (about 62,000 entries).
func PaperSBM(seed int64) SBMParams {
	return SBMParams{N: 1024, S: 64, Q: 0.8, P: 0.01, Seed: seed}
}

// CheckSBMParams reports the first bad parameter.
func CheckSBMParams(p SBMParams) error {
	switch {
	case p.N < 1 || uint64(p.N) > 1<<32:
		return fmt.Errorf("sbm: N = %d, must be in [1, 2^32]", p.N)
	case p.S < 1 || p.S > p.N:
		return fmt.Errorf("sbm: block size S = %d, must be in [1, N = %d]", p.S, p.N)
	case p.N%p.S != 0:
		return fmt.Errorf("sbm: block size S = %d does not divide N = %d", p.S, p.N)
	case !(p.Q >= 0 && p.Q <= 1):
		return fmt.Errorf("sbm: Q = %v, must be in [0, 1]", p.Q)
	case !(p.P >= 0 && p.P <= 1):
		return fmt.Errorf("sbm: P = %v, must be in [0, 1]", p.P)
	}
	return nil
}

// SBMExpectedEntries is the expected number of entries N·(Q·S + P·(N−S)).
func SBMExpectedEntries(p SBMParams) float64 {
	return float64(p.N) * (p.Q*float64(p.S) + p.P*float64(p.N-p.S))
}

// SBM draws a matrix from the bipartite stochastic block model. Row i is
// user UserID(i) in block i/S; feature ids are 0..N−1.
func SBM(p SBMParams) (*matrix.Matrix, error) {
	if err := CheckSBMParams(p); err != nil {
		return nil, err
	}
	est := SBMExpectedEntries(p)
	if est > math.MaxInt32*4 {
		return nil, fmt.Errorf("sbm: about %.3g entries expected, too many to hold in memory", est)
	}
	m := matrix.New(p.N, int(est*1.01)+16)
	src := &rand.PCG{}
	r := rand.New(src)
	n, s := uint64(p.N), uint64(p.S)
	var row []uint32
	for i := uint64(0); i < n; i++ {
		seedRow(src, p.Seed, streamSBM, int64(i))
		lo := i / s * s
		row = sampleRange(r, row[:0], 0, lo, p.P)
		row = sampleRange(r, row, lo, s, p.Q)
		row = sampleRange(r, row, lo+s, n-lo-s, p.P)
		m.Users = append(m.Users, UserID(int64(i)))
		m.Features = append(m.Features, row...)
		m.Offsets = append(m.Offsets, int64(len(m.Features)))
	}
	return m, nil
}
