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
}

// ReleaseInfo describes one release.
type ReleaseInfo struct {
	Name    string `json:"name"`
	Rows    int64  `json:"rows"`
	Classes int64  `json:"classes"`
	MinSize int64  `json:"min_class"`
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
