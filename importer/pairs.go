package importer

import (
	"bytes"
	"io"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
)

// Pairs reads "user<TAB>feature" lines from r (see the package doc).
func Pairs(r io.Reader, name string, opts Options) (*matrix.Matrix, Stats, error) {
	st := Stats{Format: FormatPairs}
	lr := newLineReader(r, name)
	row := make(map[string]uint32)
	var users []string
	var keys []uint64 // row<<32 | feature
	var last uint32
	var lastUser string
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if isSkippable(line) {
			st.Skipped++
			continue
		}
		tab := bytes.IndexByte(line, '\t')
		if tab < 0 {
			return nil, st, lr.errorf("", "want \"user<TAB>feature\", found no tab in %s", quote(line))
		}
		user, feat := line[:tab], bytes.Trim(line[tab+1:], " ")
		if len(user) == 0 {
			return nil, st, lr.errorf("field 1 (user)", "empty user id")
		}
		f, err := parseUint32(feat)
		if err != nil {
			return nil, st, lr.errorf("field 2 (feature)", "%v", err)
		}
		i, ok := last, len(users) > 0 && string(user) == lastUser
		if !ok {
			i, ok = row[string(user)]
		}
		if !ok {
			if len(users) == 1<<32-1 {
				return nil, st, lr.errorf("field 1 (user)", "too many users")
			}
			i = uint32(len(users))
			u := string(user)
			users = append(users, u)
			row[u] = i
		}
		last, lastUser = i, users[i] // lines of one user are often adjacent
		keys = append(keys, uint64(i)<<32|uint64(f))
		st.Records++
	}
	st.Lines = lr.line
	if err := lr.failure(); err != nil {
		return nil, st, err
	}
	n := len(keys)
	sortKeys(keys)
	keys = slices.Compact(keys)
	st.RepeatedEntries = int64(n - len(keys))
	m := &matrix.Matrix{
		Users:    users,
		Offsets:  make([]int64, len(users)+1),
		Features: make([]uint32, len(keys)),
	}
	k := 0
	for i := range users {
		for k < len(keys) && keys[k]>>32 == uint64(i) {
			m.Features[k] = uint32(keys[k])
			k++
		}
		m.Offsets[i+1] = int64(k)
	}
	return finish(m, &st, name, opts, true) // the row map keeps users distinct
}
