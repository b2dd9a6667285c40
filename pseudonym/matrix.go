package pseudonym

import (
	"fmt"

	"github.com/smoothanon/smoothanon/matrix"
)

// CollisionError is two different user ids with the same pseudonym. At 128
// bits it is not expected before about 2^64 users, but a release with a
// collision would merge two users, so it is refused rather than assumed
// away. It names the two ids, which are the operator's own input.
type CollisionError struct {
	A, B, Pseudonym string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("user ids %q and %q have the same pseudonym %s; draw another key", e.A, e.B, e.Pseudonym)
}

// Matrix returns a copy of m whose user ids are their pseudonyms under k,
// in m's row order; the features are shared with m, not copied. Two ids
// with one pseudonym are a *CollisionError; repeated ids in m stay
// repeated (they map to one pseudonym, and are the caller's to refuse).
func Matrix(m *matrix.Matrix, k Key) (*matrix.Matrix, error) {
	return mapUsers(m, NewMapper(k).ID)
}

// mapUsers is Matrix with the pseudonym function given (tests force
// collisions through it).
func mapUsers(m *matrix.Matrix, id func(string) string) (*matrix.Matrix, error) {
	seen := make(map[string]string, len(m.Users))
	out := &matrix.Matrix{Users: make([]string, len(m.Users)), Offsets: m.Offsets, Features: m.Features}
	for i, u := range m.Users {
		p := id(u)
		if prev, ok := seen[p]; ok && prev != u {
			return nil, &CollisionError{A: prev, B: u, Pseudonym: p}
		}
		seen[p] = u
		out.Users[i] = p
	}
	return out, nil
}
