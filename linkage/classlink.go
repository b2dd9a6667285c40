package linkage

import (
	"errors"

	"github.com/smoothanon/smoothanon/matrix"
)

// ClassLink is what linking two consecutive releases class to class by
// their released feature sets shows: which classes of the later release
// reappear with an identical feature set, and how their sizes changed.
type ClassLink struct {
	// From and To number the releases (1-based).
	From int `json:"from"`
	To   int `json:"to"`
	// ClassesFrom and ClassesTo are the releases' classes.
	ClassesFrom int64 `json:"classes_from"`
	ClassesTo   int64 `json:"classes_to"`
	// Matched is the classes of To whose feature set is a class of From;
	// MatchedUsers the users of To in them.
	Matched      int64 `json:"matched"`
	MatchedUsers int64 `json:"matched_users"`
	// Among the matched: size unchanged, grown, shrunk.
	SameSize int64 `json:"same_size"`
	Grew     int64 `json:"grew"`
	Shrank   int64 `json:"shrank"`
	// ChangedBelowK is the matched classes whose size changed by 1..k−1
	// users: the attacker learns that that few users joined or left a
	// class whose other members it can name by feature set.
	ChangedBelowK int64 `json:"changed_below_k"`
	// MaxChange is the largest change in size of a matched class.
	MaxChange int64 `json:"max_change"`
}

// Classes links each release to the next by released feature set.
func Classes(releases []*matrix.Matrix, k int) ([]ClassLink, error) {
	if len(releases) < 2 {
		return nil, errors.New("linkage: class linking needs at least 2 releases")
	}
	var links []ClassLink
	prev := classify(releases[0])
	for j := 1; j < len(releases); j++ {
		cur := classify(releases[j])
		l := ClassLink{From: j, To: j + 1, ClassesFrom: int64(len(prev.sizes)), ClassesTo: int64(len(cur.sizes))}
		for c, key := range cur.keys {
			p, ok := prev.byKey[key]
			if !ok {
				continue
			}
			now, was := cur.sizes[c], prev.sizes[p]
			l.Matched++
			l.MatchedUsers += now
			d := now - was
			switch {
			case d == 0:
				l.SameSize++
			case d > 0:
				l.Grew++
			default:
				l.Shrank++
				d = -d
			}
			if d > 0 && d < int64(k) {
				l.ChangedBelowK++
			}
			l.MaxChange = max(l.MaxChange, d)
		}
		links = append(links, l)
		prev = cur
	}
	return links, nil
}
