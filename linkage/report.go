package linkage

import (
	"fmt"

	"github.com/smoothanon/smoothanon/matrix"
)

// Report is the result of Measure.
type Report struct {
	K int `json:"k"`
	// Releases are the releases' rows and classes, in the order given.
	Releases []ReleaseInfo `json:"releases"`
	// IDOverlap[i] is Overlap(release i+1, release i+2).
	IDOverlap []float64 `json:"id_overlap"`
	// IDsJoin is whether every consecutive pair overlaps at least MinJoin.
	IDsJoin bool `json:"ids_join"`
	// Mode is "users" (Users is set) or "classes" (ClassLinks is set).
	Mode string `json:"mode"`
	// Note says in words why the mode was chosen.
	Note       string      `json:"note"`
	Users      *UserReport `json:"users,omitempty"`
	ClassLinks []ClassLink `json:"class_links,omitempty"`
	// SharedKeys are the pairs of releases pseudonymized under one key
	// (CheckKeys): their ids join whatever their overlap, so the series
	// is not protected.
	SharedKeys []KeyShare `json:"shared_keys,omitempty"`
}

// ReleaseInfo describes one release.
type ReleaseInfo struct {
	Name    string `json:"name"`
	Rows    int64  `json:"rows"`
	Classes int64  `json:"classes"`
	MinSize int64  `json:"min_class"`
	// KeyFingerprint is the fingerprint of the release's pseudonym key
	// (pseudonym.Key.Fingerprint), when it records one (CheckKeys).
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
}

// KeyShare is two releases pseudonymized under one key: a user has the
// same pseudonym in both, so the releases link by user id as if the ids
// were kept.
type KeyShare struct {
	// A and B number the releases (1-based), A < B.
	A int `json:"a"`
	B int `json:"b"`
	// Fingerprint is the key's fingerprint.
	Fingerprint string `json:"fingerprint"`
}

func (s KeyShare) String() string {
	return fmt.Sprintf("releases %d and %d share a pseudonym key (fingerprint %s): their user ids join, so the series is not protected",
		s.A, s.B, s.Fingerprint)
}

// SharedKeys returns every pair of releases with one key fingerprint, in
// order; fingerprints[i] is release i+1's, "" when it records none (kept
// ids, or a release older than fingerprints), which is never shared.
func SharedKeys(fingerprints []string) []KeyShare {
	var out []KeyShare
	for i, a := range fingerprints {
		for j := i + 1; j < len(fingerprints); j++ {
			if a != "" && fingerprints[j] == a {
				out = append(out, KeyShare{A: i + 1, B: j + 1, Fingerprint: a})
			}
		}
	}
	return out
}

// CheckKeys records the releases' key fingerprints (fingerprints[i] is
// release i+1's; "" for none) and the pairs that share one in SharedKeys.
func (r *Report) CheckKeys(fingerprints []string) error {
	if len(fingerprints) != len(r.Releases) {
		return fmt.Errorf("linkage: %d key fingerprints for %d releases", len(fingerprints), len(r.Releases))
	}
	for i, fp := range fingerprints {
		r.Releases[i].KeyFingerprint = fp
	}
	r.SharedKeys = SharedKeys(fingerprints)
	return nil
}

// Measure links releases (names label them in the report): by user id
// when the ids join (Users), else class to class (Classes).
func Measure(names []string, releases []*matrix.Matrix, k int) (*Report, error) {
	if len(names) != len(releases) {
		return nil, fmt.Errorf("linkage: %d names for %d releases", len(names), len(releases))
	}
	r := &Report{K: k, IDsJoin: true}
	for i, m := range releases {
		c := classify(m)
		info := ReleaseInfo{Name: names[i], Rows: int64(m.NumRows()), Classes: int64(len(c.sizes))}
		for j, s := range c.sizes {
			if j == 0 || s < info.MinSize {
				info.MinSize = s
			}
		}
		r.Releases = append(r.Releases, info)
		if i > 0 {
			o := Overlap(releases[i-1], m)
			r.IDOverlap = append(r.IDOverlap, o)
			if o < MinJoin {
				r.IDsJoin = false
				if r.Note == "" {
					r.Note = fmt.Sprintf("user ids of %s and %s do not join (%.2f%% of ids shared; pseudonyms under different keys?): users cannot be followed, so classes are linked by released feature set instead",
						names[i-1], names[i], 100*o)
				}
			}
		}
	}
	if !r.IDsJoin {
		links, err := Classes(releases, k)
		if err != nil {
			return nil, err
		}
		r.Mode, r.ClassLinks = "classes", links
		return r, nil
	}
	u, err := Users(releases, k)
	if err != nil {
		return nil, err
	}
	r.Mode, r.Users = "users", u
	r.Note = "user ids join: each user's linked set is the users sharing its class in every release that contains it"
	return r, nil
}
