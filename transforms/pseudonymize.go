package transforms

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
)

func init() {
	register.DoFn2x0[matrix.Matrix, func(matrix.Matrix)](&pseudonymizeFn{})
}

// PseudonymizeParams configure Pseudonymize.
type PseudonymizeParams struct {
	// Key is the release's pseudonym key. Required. It travels inside the
	// job graph to the workers (the DoFn's serialized fields), so whoever
	// can read the submitted job can read it: see docs/privacy.md.
	Key pseudonym.Key
}

// Pseudonymize replaces the user id of every row of a
// PCollection<matrix.Matrix> of blocks by
// its pseudonym under params.Key. The pipeline applies it right after
// Read, before anything is keyed, sorted, chunked or sharded by user id,
// so no order or shard follows the real ids. Two ids with one pseudonym
// become a repeated user id, which Write reports and the launcher refuses
// to publish (release.Outcome).
func Pseudonymize(s beam.Scope, rows beam.PCollection, params PseudonymizeParams) beam.PCollection {
	s = s.Scope("Pseudonymize")
	if params.Key == (pseudonym.Key{}) {
		panic("pseudonymize: no key")
	}
	return beam.ParDo(s, &pseudonymizeFn{Key: string(params.Key.Text())}, rows)
}

type pseudonymizeFn struct {
	Key string `json:"key"` // pseudonym.Key.Text()
	mp  *pseudonym.Mapper
}

func (fn *pseudonymizeFn) Setup() error {
	k, err := pseudonym.ParseKey("pseudonymize", []byte(fn.Key))
	if err != nil {
		return fmt.Errorf("pseudonymize: %w", err)
	}
	fn.mp = pseudonym.NewMapper(k)
	return nil
}

func (fn *pseudonymizeFn) ProcessElement(b matrix.Matrix, emit func(matrix.Matrix)) {
	users := make([]string, len(b.Users))
	for i, u := range b.Users {
		users[i] = fn.mp.ID(u)
	}
	b.Users = users
	emit(b)
}
