// Package gen makes synthetic user×feature data: the paper's bipartite
// stochastic block model (SBM) and power-law user-interest lists
// (UserLists).
//
// Every generator is deterministic for its parameters and seed, and each row
// is drawn from its own pseudo-random stream seeded from (seed, row), so rows
// do not depend on how generation is split into chunks and could be made in
// parallel.
package gen

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// UserIDWidth is the number of digits in a generated user id.
const UserIDWidth = 10

// UserID returns the id of generated row i: "u" and i in UserIDWidth
// zero-padded digits (e.g. "u0000001234"), so that lexical order is row
// order for i < 10^UserIDWidth.
func UserID(i int64) string {
	var d [20]byte
	digits := strconv.AppendInt(d[:0], i, 10)
	var b [1 + 20]byte
	id := append(b[:0], 'u')
	for k := len(digits); k < UserIDWidth; k++ {
		id = append(id, '0')
	}
	return string(append(id, digits...))
}

// Stream tags keep the generators' row streams apart for equal seeds.
const (
	streamSBM       = 0x5b5b_0001
	streamUserLists = 0x5b5b_0002
)

func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// seedRow reseeds src with the stream of row in (seed, stream).
func seedRow(src *rand.PCG, seed int64, stream uint64, row int64) {
	a := splitmix(uint64(seed) ^ splitmix(stream))
	b := splitmix(a ^ uint64(row))
	src.Seed(b, splitmix(b^a))
}

// sampleRange appends base+j for each j in [0, n) chosen independently with
// probability prob, in ascending order. It skips over the unchosen positions
// with geometric jumps, so it costs O(1 + chosen) rather than O(n).
func sampleRange(r *rand.Rand, dst []uint32, base, n uint64, prob float64) []uint32 {
	switch {
	case n == 0 || prob <= 0:
		return dst
	case prob >= 1:
		for j := uint64(0); j < n; j++ {
			dst = append(dst, uint32(base+j))
		}
		return dst
	}
	inv := 1 / math.Log1p(-prob) // negative
	j := uint64(0)
	for {
		// Failures before the next success: floor(log(U)/log(1-p)), U in (0,1].
		skip := math.Floor(math.Log(1-r.Float64()) * inv)
		if skip >= float64(n-j) {
			return dst
		}
		j += uint64(skip)
		dst = append(dst, uint32(base+j))
		j++
		if j >= n {
			return dst
		}
	}
}
