package assess

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/transforms"
)

// Risk describes how exposed the users of rows are as they are: how many
// share their exact feature set with fewer than k others.
//
// Figures are of the rows given. When they are a sample of a larger
// input, a set unique in the sample may be shared outside it, so Unique
// and every BelowK share are upper bounds of the input's, not estimates;
// the degree distribution is an estimate of the input's.
type Risk struct {
	// Rows, Entries and Features count the rows, their entries and the
	// distinct features they hold.
	Rows     int64 `json:"rows"`
	Entries  int64 `json:"entries"`
	Features int64 `json:"features"`
	// Degrees counts rows by their number of features, in bins of powers
	// of two: [0], [1], [2,3], [4,7], ...; Degrees[i] holds degrees d with
	// bits.Len(d) == i.
	Degrees []int64 `json:"degrees"`
	// Unique is the share of rows whose feature set no other row holds.
	Unique float64 `json:"unique"`
	// BelowK is, for each k asked for, the share of rows whose feature
	// set fewer than k rows hold (themselves included).
	BelowK []KShare `json:"below_k"`
	// Exposing lists the features whose removal from every row would make
	// the most unique rows non-unique (a unique row r holding f is made
	// non-unique when another row holds exactly r without f), most first,
	// at most TopExposing of them.
	Exposing []FeatureCount `json:"exposing"`
}

// FromCounts is the Risk of the exact counts of a job (transforms.Risk)
// at ks, the k it was given; names, when not nil, name c.Exposing.
func FromCounts(c transforms.RiskCounts, ks []int, names []string) Risk {
	r := Risk{Rows: c.Rows, Entries: c.Entries, Features: c.Features, Degrees: c.Degrees}
	if c.Rows == 0 {
		return r
	}
	r.Unique = float64(c.Unique) / float64(c.Rows)
	for i, k := range ks {
		r.BelowK = append(r.BelowK, KShare{K: k, Share: float64(c.Below[i]) / float64(c.Rows)})
	}
	for i, f := range c.Exposing {
		fc := FeatureCount{Feature: f.Feature, Rows: f.Rows}
		if names != nil {
			fc = FeatureCount{Rows: f.Rows, Name: names[i]}
		}
		r.Exposing = append(r.Exposing, fc)
	}
	return r
}

// KShare is a share of rows at one k.
type KShare struct {
	K     int     `json:"k"`
	Share float64 `json:"share"`
}

// FeatureCount is a feature and a count of rows.
type FeatureCount struct {
	// Feature is the feature's id; 0 for named features, which Name
	// names ("" for ids).
	Feature uint32 `json:"feature"`
	Rows    int64  `json:"rows"`
	Name    string `json:"name,omitempty"`
}

// TopExposing is the length of Risk.Exposing.
const TopExposing = transforms.TopExposing

// RiskOf measures m's rows (see Risk) at each k of ks.
func RiskOf(m *matrix.Matrix, ks []int) Risk {
	// keyOf is the set feats, without feats[skip] (skip < 0: none), as a
	// map key: sets meet by their features, never by a hash that two
	// sets could share.
	keyOf := func(feats []uint32, skip int) string {
		b := make([]byte, 0, 4*len(feats))
		for i, f := range feats {
			if i != skip {
				b = binary.LittleEndian.AppendUint32(b, f)
			}
		}
		return string(b)
	}
	r := Risk{Rows: int64(m.NumRows()), Entries: int64(len(m.Features))}
	sets := make(map[string]int64, m.NumRows())
	keys := make([]string, m.NumRows())
	feats := map[uint32]struct{}{}
	for i := range keys {
		row := m.Row(i)
		keys[i] = keyOf(row, -1)
		sets[keys[i]]++
		d := 0
		for n := len(row); n > 0; n >>= 1 {
			d++
		}
		for len(r.Degrees) <= d {
			r.Degrees = append(r.Degrees, 0)
		}
		r.Degrees[d]++
		for _, f := range row {
			feats[f] = struct{}{}
		}
	}
	r.Features = int64(len(feats))
	if r.Rows == 0 {
		return r
	}
	below := make([]int64, len(ks))
	var unique int64
	exposing := map[uint32]int64{}
	for i, key := range keys {
		c := sets[key]
		for j, k := range ks {
			if c < int64(k) {
				below[j]++
			}
		}
		if c != 1 {
			continue
		}
		unique++
		row := m.Row(i)
		for j, f := range row {
			if sets[keyOf(row, j)] > 0 {
				exposing[f]++
			}
		}
	}
	r.Unique = float64(unique) / float64(r.Rows)
	for j, k := range ks {
		r.BelowK = append(r.BelowK, KShare{K: k, Share: float64(below[j]) / float64(r.Rows)})
	}
	for f, n := range exposing {
		r.Exposing = append(r.Exposing, FeatureCount{Feature: f, Rows: n})
	}
	slices.SortFunc(r.Exposing, func(a, b FeatureCount) int {
		return cmp.Or(cmp.Compare(b.Rows, a.Rows), cmp.Compare(a.Feature, b.Feature))
	})
	r.Exposing = r.Exposing[:min(len(r.Exposing), TopExposing)]
	return r
}
