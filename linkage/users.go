package linkage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/smoothanon/smoothanon/matrix"
)

// MaxReleases is the most releases Users links at once (a user's presence
// is a bit set of one word).
const MaxReleases = 64

// Bucket is one bar of a histogram of linked set sizes: Users users have a
// set of Lo..Hi users (inclusive).
type Bucket struct {
	Lo    int64 `json:"lo"`
	Hi    int64 `json:"hi"`
	Users int64 `json:"users"`
}

// UserReport is the distribution of the users' linked anonymity sets.
type UserReport struct {
	// Users is every user in at least one release.
	Users int64 `json:"users"`
	// BelowK, BelowHalfK and Pinned count users whose linked set is
	// smaller than k, smaller than k/2, and exactly the user alone.
	BelowK     int64 `json:"below_k"`
	BelowHalfK int64 `json:"below_half_k"`
	Pinned     int64 `json:"pinned"`
	// The same as fractions of Users.
	BelowKFraction     float64 `json:"below_k_fraction"`
	BelowHalfKFraction float64 `json:"below_half_k_fraction"`
	PinnedFraction     float64 `json:"pinned_fraction"`
	// MinSet is the smallest linked set; MeanSet the mean over users.
	MinSet  int64   `json:"min_set"`
	MeanSet float64 `json:"mean_set"`
	// Histogram: one bucket per size 1..k−1, then [k, 2k−1], [2k, 4k−1], …
	// up to the largest set; empty buckets are left out.
	Histogram []Bucket `json:"histogram"`
}

// Users links releases by user id and measures every user's linked
// anonymity set: the users v such that, in every release that contains u,
// v is present and in u's class. Repeated ids within a release are an
// error (a release names each user once).
func Users(releases []*matrix.Matrix, k int) (*UserReport, error) {
	switch {
	case len(releases) == 0:
		return nil, errors.New("linkage: no releases")
	case len(releases) > MaxReleases:
		return nil, fmt.Errorf("linkage: %d releases, at most %d", len(releases), MaxReleases)
	case k < 1:
		return nil, fmt.Errorf("linkage: k = %d, must be at least 1", k)
	}
	t, err := newTable(releases)
	if err != nil {
		return nil, err
	}
	sizes := t.linkedSizes()
	return summarize(sizes, int64(k)), nil
}

// table holds, per user (in order of first appearance), its class in each
// release, or −1 where the release does not contain it.
type table struct {
	r       int
	classes []int32 // user u's class in release j: classes[u*r+j]
	present []uint64
}

func newTable(releases []*matrix.Matrix) (*table, error) {
	t := &table{r: len(releases)}
	index := map[string]int{}
	for j, m := range releases {
		c := classify(m)
		for i, u := range m.Users {
			id, ok := index[u]
			if !ok {
				id = len(t.present)
				index[u] = id
				t.present = append(t.present, 0)
				for range t.r {
					t.classes = append(t.classes, -1)
				}
			}
			if t.present[id]&(1<<j) != 0 {
				return nil, fmt.Errorf("linkage: release %d names user %q twice", j+1, u)
			}
			t.present[id] |= 1 << j
			t.classes[id*t.r+j] = c.ofRow[i]
		}
	}
	return t, nil
}

// linkedSizes counts, for each presence pattern P that occurs, the users
// by their classes in the releases of P (users absent from one of them do
// not count), then reads each user's set size under its own pattern.
// Patterns are few in practice (users present everywhere share one).
func (t *table) linkedSizes() []int64 {
	n := len(t.present)
	sizes := make([]int64, n)
	byPattern := map[uint64][]int{}
	for u, p := range t.present {
		byPattern[p] = append(byPattern[p], u)
	}
	key := make([]byte, 0, 4*t.r)
	for p, members := range byPattern {
		counts := map[string]int64{}
		for v := 0; v < n; v++ {
			if t.present[v]&p != p {
				continue
			}
			counts[string(t.project(key[:0], v, p))]++
		}
		for _, u := range members {
			sizes[u] = counts[string(t.project(key[:0], u, p))]
		}
	}
	return sizes
}

// project appends user v's classes in the releases of pattern p.
func (t *table) project(b []byte, v int, p uint64) []byte {
	for j := 0; j < t.r; j++ {
		if p&(1<<j) != 0 {
			b = binary.LittleEndian.AppendUint32(b, uint32(t.classes[v*t.r+j]))
		}
	}
	return b
}

func summarize(sizes []int64, k int64) *UserReport {
	r := &UserReport{Users: int64(len(sizes)), MinSet: math.MaxInt64}
	var sum int64
	hist := map[int64]int64{} // bucket lower bound -> users
	for _, s := range sizes {
		sum += s
		r.MinSet = min(r.MinSet, s)
		if s < k {
			r.BelowK++
		}
		if 2*s < k {
			r.BelowHalfK++
		}
		if s == 1 {
			r.Pinned++
		}
		hist[bucketLo(s, k)]++
	}
	if r.Users == 0 {
		r.MinSet = 0
		return r
	}
	n := float64(r.Users)
	r.BelowKFraction, r.BelowHalfKFraction, r.PinnedFraction = float64(r.BelowK)/n, float64(r.BelowHalfK)/n, float64(r.Pinned)/n
	r.MeanSet = float64(sum) / n
	for lo := int64(1); len(hist) > 0; lo = bucketHi(lo, k) + 1 {
		if c, ok := hist[lo]; ok {
			r.Histogram = append(r.Histogram, Bucket{Lo: lo, Hi: bucketHi(lo, k), Users: c})
			delete(hist, lo)
		}
	}
	return r
}

// bucketLo is the lower bound of s's histogram bucket: s itself below k,
// else k·2^i with k·2^i ≤ s < k·2^(i+1).
func bucketLo(s, k int64) int64 {
	if s < k {
		return s
	}
	lo := k
	for lo*2 <= s {
		lo *= 2
	}
	return lo
}

func bucketHi(lo, k int64) int64 {
	if lo < k {
		return lo
	}
	return 2*lo - 1
}
