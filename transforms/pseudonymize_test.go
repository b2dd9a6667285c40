package transforms

import (
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/smoothanon/smoothanon/pseudonym"
)

// TestPseudonymize: every row's id becomes its pseudonym under the key
// (pseudonym.Mapper, the solve command's function), features untouched.
func TestPseudonymize(t *testing.T) {
	key, err := pseudonym.ParseKey("test", []byte(strings.Repeat("3c", pseudonym.KeyBytes)))
	if err != nil {
		t.Fatal(err)
	}
	mp := pseudonym.NewMapper(key)
	var in, want []testRow
	for _, u := range []string{"alice", "bob", "carol"} {
		f := []uint32{uint32(len(u)), 100}
		in = append(in, testRow{u, f})
		want = append(want, testRow{mp.ID(u), f})
	}
	p, s, col := ptest.Create([]any{blockOf(in...)})
	passert.Equals(s, Pseudonymize(s, col, PseudonymizeParams{Key: key}), blockOf(want...))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}
