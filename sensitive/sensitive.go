// Package sensitive reads a list of sensitive features and ties it to a
// release.
//
// A sensitive feature (a health condition, a religion, an orientation)
// follows its own rule in a release, whatever the mode (see
// solver.SensitivePolicy): a class shows it only if every member held it
// (it is never created) and the class has at least SensitiveK members; or,
// under the drop policy, never. A release made with a list records it as
// a Record (the list's hash, the least class size and the policy) in its
// files' metadata, and verify refuses to check the release against
// another list.
//
// Threat model: the rules keep a sensitive feature from being attributed
// to anyone who did not hold it, and make a class that shows one larger.
// They do not hide it: a shown sensitive feature is true of every member
// of its class, so knowing that someone is in the class reveals it (the
// homogeneity attack that l-diversity addresses). The drop policy is the
// choice where that is unacceptable.
package sensitive

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/storage"
)

// List is a sensitive feature list: its entries as given (feature ids
// in decimal, or names), sorted and without repeats.
type List struct {
	Entries []string
}

// MaxLine is the longest entry Parse accepts, in bytes.
const MaxLine = 1 << 16

// Parse reads a list: one entry a line, a feature id (decimal) or a
// name. Lines are taken as they are, but for a trailing "\r" and a
// UTF-8 byte order mark before the first; empty lines are skipped.
// Repeats are merged. An entry that is not UTF-8 is an error naming its
// line, and so is a list without entries (a truncated or wrong file would
// otherwise protect nothing).
func Parse(r io.Reader) (*List, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), MaxLine)
	var l List
	for n := 1; sc.Scan(); n++ {
		e := strings.TrimSuffix(sc.Text(), "\r")
		if n == 1 {
			e = strings.TrimPrefix(e, "\ufeff")
		}
		if e == "" {
			continue
		}
		if !utf8.ValidString(e) {
			return nil, fmt.Errorf("line %d: not UTF-8", n)
		}
		l.Entries = append(l.Entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(l.Entries) == 0 {
		return nil, errors.New("no entries")
	}
	slices.Sort(l.Entries)
	l.Entries = slices.Compact(l.Entries)
	return &l, nil
}

// Hash is the hex SHA-256 of the list: its entries, sorted, each
// followed by "\n". It depends on the set of entries only.
func (l *List) Hash() string {
	h := sha256.New()
	for _, e := range l.Entries {
		io.WriteString(h, e)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// IDs are the list's feature ids, for a release of ids: every entry must
// be one (decimal, below 2^32); the first that is not is the error.
func (l *List) IDs() ([]uint32, error) {
	ids := make([]uint32, 0, len(l.Entries))
	for _, e := range l.Entries {
		v, err := strconv.ParseUint(e, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("sensitive entry %q is not a feature id (features are ids below 2^32)", e)
		}
		ids = append(ids, uint32(v))
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil // "07" and "7" are one id
}

// Canonical is the list as a release of values compares its entries: for
// feature ids (matrix.ValuesIDs) and integer names (ValuesIntegers) each
// entry in its shortest decimal form, so that "07" and "7" are one entry
// and lists that name the same features hash alike; string names
// (ValuesStrings) as given. An entry that is not a number of that kind is
// the error.
func (l *List) Canonical(values matrix.Values) (*List, error) {
	var c List
	switch values {
	case matrix.ValuesStrings:
		return l, nil
	case matrix.ValuesIDs:
		ids, err := l.IDs()
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			c.Entries = append(c.Entries, strconv.FormatUint(uint64(id), 10))
		}
	case matrix.ValuesIntegers:
		for _, e := range l.Entries {
			v, err := strconv.ParseInt(e, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("sensitive entry %q is not an integer (the features are integers)", e)
			}
			c.Entries = append(c.Entries, strconv.FormatInt(v, 10))
		}
	default:
		return nil, fmt.Errorf("sensitive list for features of %v values", values)
	}
	slices.Sort(c.Entries)
	c.Entries = slices.Compact(c.Entries)
	return &c, nil
}

// Resolve maps the list to the ids of vocab (nil: the features are ids,
// see IDs). Names the vocabulary lacks are held by no one and drop out
// (Unmatched counts them); for integer names an entry must be a decimal
// int64.
func (l *List) Resolve(vocab *matrix.Vocab) ([]uint32, error) {
	if vocab == nil {
		return l.IDs()
	}
	var ids []uint32
	var key []byte
	for _, e := range l.Entries {
		key = key[:0]
		if vocab.Values() == matrix.ValuesIntegers {
			v, err := strconv.ParseInt(e, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("sensitive entry %q is not an integer (the features are integers)", e)
			}
			key = matrix.IntNameKey(key, v)
		} else {
			key = append(key, e...)
		}
		if id, ok := vocab.Lookup(key); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// Unmatched is how many of the list's entries name no feature of vocab:
// held by no one, or misspelt. 0 for a release of ids (nil vocab).
func (l *List) Unmatched(vocab *matrix.Vocab) int {
	if vocab == nil {
		return 0
	}
	ids, err := l.Resolve(vocab)
	if err != nil {
		return 0
	}
	return len(l.Entries) - len(ids)
}

// Record is what a release says of the sensitive rule it was made
// under.
type Record struct {
	// Hash is List.Hash of the list. Required.
	Hash string
	// K is the least size of a class that shows a sensitive feature
	// (solver.SensitiveMin; k where none was given). Required.
	K int
	// Policy is the solver's policy.
	Policy solver.SensitivePolicy
}

// NewRecord is the record of a release of list under p.
func NewRecord(l *List, p solver.Params) Record {
	return Record{Hash: l.Hash(), K: max(p.K, p.SensitiveK), Policy: p.SensitivePolicy}
}

// String is the record as the release's files carry it
// (matrix.MetaSensitive): "sha256=<hex> k=<K> policy=<show|drop>".
func (r Record) String() string {
	return fmt.Sprintf("sha256=%s k=%d policy=%s", r.Hash, r.K, r.Policy)
}

// ParseRecord parses Record.String.
func ParseRecord(s string) (Record, error) {
	var r Record
	var policy string
	f := strings.Fields(s)
	if len(f) != 3 || !strings.HasPrefix(f[0], "sha256=") || !strings.HasPrefix(f[1], "k=") || !strings.HasPrefix(f[2], "policy=") {
		return r, fmt.Errorf("malformed sensitive record %q", s)
	}
	r.Hash, policy = strings.TrimPrefix(f[0], "sha256="), strings.TrimPrefix(f[2], "policy=")
	k, err := strconv.Atoi(strings.TrimPrefix(f[1], "k="))
	if err != nil || k < 1 || len(r.Hash) != 64 {
		return r, fmt.Errorf("malformed sensitive record %q", s)
	}
	r.K = k
	if r.Policy, err = solver.ParseSensitivePolicy(policy); err != nil {
		return r, fmt.Errorf("malformed sensitive record %q: %v", s, err)
	}
	return r, nil
}

// Match reports why a release's record (its MetaSensitive value, ""
// when it has none) does not match want: made without a list, with
// another list, or with another least size or policy. nil when it
// matches.
func Match(got string, want Record) error {
	if got == "" {
		return fmt.Errorf("the release records no sensitive list: it was made without --sensitive")
	}
	r, err := ParseRecord(got)
	if err != nil {
		return err
	}
	switch {
	case r.Hash != want.Hash:
		return fmt.Errorf("the release was made with another sensitive list (sha256 %s; the list given has %s)", r.Hash, want.Hash)
	case r.K != want.K:
		return fmt.Errorf("the release was made with sensitive_k = %d, not %d", r.K, want.K)
	case r.Policy != want.Policy:
		return fmt.Errorf("the release was made with sensitive policy %s, not %s", r.Policy, want.Policy)
	}
	return nil
}

// Load reads the list at uri (a local path or a bucket object).
func Load(ctx context.Context, uri string) (*List, error) {
	b, err := storage.ReadFile(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("sensitive list: %w", err)
	}
	l, err := Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("sensitive list %s: %w", uri, err)
	}
	return l, nil
}
