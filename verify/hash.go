package verify

import (
	"math"
	"math/bits"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// RowHash returns a 128-bit hash of a sorted feature list. Identical lists
// get identical hashes; different lists collide with probability about
// 2^-128 for non-adversarial data (the hash is not cryptographic). Check
// groups rows by it and then confirms equality of the lists themselves, so a
// collision can never merge two classes.
//
// It is stable across processes and platforms and depends only on the list,
// so a distributed verifier can group output rows by RowHash (e.g. a
// GroupByKey on the 16 bytes), then per class: confirm its rows are equal,
// count its size, and sum per-feature how many of its users held each
// feature in the input (see CountCommon).
func RowHash(features []uint32) [2]uint64 {
	n := uint64(len(features))
	h1 := 0x9e3779b97f4a7c15 ^ n*0xbf58476d1ce4e5b9
	h2 := 0xc2b2ae3d27d4eb4f ^ n*0x94d049bb133111eb
	i := 0
	for ; i+1 < len(features); i += 2 {
		v := uint64(features[i]) | uint64(features[i+1])<<32
		h1 = mixA(h1 ^ v)
		h2 = mixB(h2 + v)
	}
	if i < len(features) {
		v := uint64(features[i]) | 1<<63
		h1 = mixA(h1 ^ v)
		h2 = mixB(h2 + v)
	}
	return [2]uint64{mixA(h1 ^ h2>>17), mixB(h2 ^ h1>>23)}
}

// mixA is the splitmix64 finaliser, mixB murmur3's fmix64 with a rotation:
// two different bijective mixers keep the two halves independent.
func mixA(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func mixB(z uint64) uint64 {
	z = bits.RotateLeft64(z, 29)
	z = (z ^ z>>33) * 0xff51afd7ed558ccd
	z = (z ^ z>>33) * 0xc4ceb9fe1a85ec53
	return z ^ z>>33
}

// CountCommon returns |a ∩ b| for two sorted, repeat-free lists.
func CountCommon(a, b []uint32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// Summarize returns the Distribution (count, sum, min, max, mean, population
// standard deviation) of values; all zero when values is empty.
func Summarize(values []int64) *smoothanonpb.Distribution {
	d := &smoothanonpb.Distribution{}
	if len(values) == 0 {
		return d
	}
	d.Count = int64(len(values))
	d.Min, d.Max = values[0], values[0]
	for _, v := range values {
		d.Sum += v
		d.Min = min(d.Min, v)
		d.Max = max(d.Max, v)
	}
	d.Mean = float64(d.Sum) / float64(d.Count)
	var ss float64
	for _, v := range values {
		x := float64(v) - d.Mean
		ss += x * x
	}
	d.Stddev = math.Sqrt(ss / float64(d.Count))
	return d
}
