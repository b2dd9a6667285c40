// Package lsh computes MinHash signatures of sparse rows: NumHashes values
// per row, each the minimum over the row's feature ids of an independent
// seeded 64-bit hash. Two rows agree on one value with probability equal to
// the Jaccard similarity of their feature sets, so sorting rows
// lexicographically by signature places similar rows next to each other —
// the pipeline cuts that order into chunks that are anonymized separately.
//
// Why not github.com/dgryski/go-minhash: it has been unmaintained since
// 2017, hashes through hash.Hash64 interfaces with byte-slice conversions on
// every feature (slow for billions of entries), and its bottom-k/sketch
// layout is not the plain "one min per hash function" signature we need as a
// sort key. A signature here is ~20 lines over a well-known mixer
// (murmur3's 64-bit finaliser applied to a seeded, golden-ratio-spread
// feature id), so we keep it in-tree, tested for determinism and for the
// Jaccard estimate.
package lsh

import (
	"encoding/binary"
	"math"
)

// NumHashes is the number of MinHash values per signature.
const NumHashes = 8

// KeyBytes is the length of a signature's byte key (big-endian values).
const KeyBytes = NumHashes * 8

// Signature holds the NumHashes minimum hash values of one row.
type Signature [NumHashes]uint64

// Empty is the signature of a row without features: every value is the
// largest uint64, so empty rows sort together, after all others.
var Empty = Signature{math.MaxUint64, math.MaxUint64, math.MaxUint64, math.MaxUint64,
	math.MaxUint64, math.MaxUint64, math.MaxUint64, math.MaxUint64}

// Hasher computes signatures with NumHashes hash functions derived from a
// seed. The zero value is not useful; use New.
type Hasher struct {
	seeds [NumHashes]uint64
}

// New returns a Hasher whose hash functions are derived from seed with
// splitmix64, so different seeds give independent families.
func New(seed int64) *Hasher {
	h := &Hasher{}
	s := uint64(seed)
	for j := range h.seeds {
		s += 0x9E3779B97F4A7C15
		h.seeds[j] = Mix64(s)
	}
	return h
}

// Mix64 is murmur3's 64-bit finaliser (fmix64), a bijective mixer with full
// avalanche.
func Mix64(z uint64) uint64 {
	z ^= z >> 33
	z *= 0xff51afd7ed558ccd
	z ^= z >> 33
	z *= 0xc4ceb9fe1a85ec53
	z ^= z >> 33
	return z
}

// Hash is hash function j applied to feature f.
func (h *Hasher) Hash(j int, f uint32) uint64 {
	return Mix64(h.seeds[j] ^ (uint64(f)+1)*0x9E3779B97F4A7C15)
}

// Sign returns the signature of a row's feature ids (any order, repeats
// allowed). A row without features gets Empty.
func (h *Hasher) Sign(features []uint32) Signature {
	sig := Empty
	for _, f := range features {
		x := (uint64(f) + 1) * 0x9E3779B97F4A7C15
		for j := range sig {
			if v := Mix64(h.seeds[j] ^ x); v < sig[j] {
				sig[j] = v
			}
		}
	}
	return sig
}

// Agreement is the fraction of positions where a and b are equal: an
// unbiased estimate of the Jaccard similarity of the two rows (with
// NumHashes = 8 its standard error is up to about 0.18).
func Agreement(a, b Signature) float64 {
	n := 0
	for j := range a {
		if a[j] == b[j] {
			n++
		}
	}
	return float64(n) / NumHashes
}

// AppendKey appends the signature as KeyBytes big-endian bytes, so that
// byte order of keys is the lexicographic order of signatures.
func (s Signature) AppendKey(dst []byte) []byte {
	for _, v := range s {
		dst = binary.BigEndian.AppendUint64(dst, v)
	}
	return dst
}

// Compare orders signatures lexicographically: -1, 0 or +1.
func (s Signature) Compare(o Signature) int {
	for j := range s {
		if s[j] != o[j] {
			if s[j] < o[j] {
				return -1
			}
			return 1
		}
	}
	return 0
}
