// Package matrix holds smoothanon's data model: a compact sparse binary
// user×feature matrix in CSR form, and its Parquet encoding.
//
// A row is a user: a string id and a sorted set of uint32 feature ids. Ids are
// kept exactly as they are in the input (they need not be contiguous), so every
// release names the same users and features as its input.
package matrix

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Matrix is a sparse binary matrix in compressed-sparse-row form.
// Row i is user Users[i] with features Features[Offsets[i]:Offsets[i+1]],
// sorted ascending and without repeats.
type Matrix struct {
	Users    []string
	Offsets  []int64 // len(Users)+1, Offsets[0] == 0
	Features []uint32
}

// New returns an empty matrix with room for rows users and entries features.
func New(rows, entries int) *Matrix {
	m := &Matrix{
		Users:    make([]string, 0, rows),
		Offsets:  make([]int64, 1, rows+1),
		Features: make([]uint32, 0, entries),
	}
	return m
}

// NumRows is the number of users.
func (m *Matrix) NumRows() int { return len(m.Users) }

// NumEntries is the number of (user, feature) pairs.
func (m *Matrix) NumEntries() int64 { return int64(len(m.Features)) }

// Row returns the sorted feature ids of row i. The slice aliases the matrix.
func (m *Matrix) Row(i int) []uint32 { return m.Features[m.Offsets[i]:m.Offsets[i+1]] }

// HashRow mixes a feature list into 64 bits, for grouping identical rows
// (equal lists hash alike; a caller confirms equality, as different lists
// may collide). It is not the verifier's hash, which stays independent.
func HashRow(r []uint32) uint64 {
	h := uint64(len(r))*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	for _, f := range r {
		h = (h ^ uint64(f)) * 0xFF51AFD7ED558CCD
		h ^= h >> 32
	}
	return h
}

// Append adds a row, sorting and deduplicating a copy of feats. It returns
// the number of repeated feature ids it dropped.
func (m *Matrix) Append(user string, feats []uint32) int {
	if len(m.Offsets) == 0 {
		m.Offsets = append(m.Offsets, 0)
	}
	start := len(m.Features)
	m.Features = append(m.Features, feats...)
	row := m.Features[start:]
	dropped := 0
	if !isStrictlySorted(row) {
		slices.Sort(row)
		u := slices.Compact(row)
		dropped = len(row) - len(u)
		m.Features = m.Features[:start+len(u)]
	}
	m.Users = append(m.Users, user)
	m.Offsets = append(m.Offsets, int64(len(m.Features)))
	return dropped
}

func isStrictlySorted(s []uint32) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

// Validate checks the CSR invariants: offsets consistent, every row sorted
// and free of repeats.
func (m *Matrix) Validate() error {
	if len(m.Offsets) != len(m.Users)+1 {
		return fmt.Errorf("matrix: %d offsets for %d rows", len(m.Offsets), len(m.Users))
	}
	if m.Offsets[0] != 0 || m.Offsets[len(m.Users)] != int64(len(m.Features)) {
		return fmt.Errorf("matrix: offsets span [%d,%d], features %d", m.Offsets[0], m.Offsets[len(m.Users)], len(m.Features))
	}
	for i := range m.Users {
		if m.Offsets[i+1] < m.Offsets[i] {
			return fmt.Errorf("matrix: row %d (%q): decreasing offsets", i, m.Users[i])
		}
		if !isStrictlySorted(m.Row(i)) {
			return fmt.Errorf("matrix: row %d (%q): features not sorted and unique", i, m.Users[i])
		}
	}
	return nil
}

// Clone returns a deep copy.
func (m *Matrix) Clone() *Matrix {
	return &Matrix{
		Users:    slices.Clone(m.Users),
		Offsets:  slices.Clone(m.Offsets),
		Features: slices.Clone(m.Features),
	}
}

// Permute returns a new matrix whose row i is row order[i] of m.
func (m *Matrix) Permute(order []int) *Matrix {
	out := New(len(order), len(m.Features))
	for _, r := range order {
		out.Users = append(out.Users, m.Users[r])
		out.Features = append(out.Features, m.Row(r)...)
		out.Offsets = append(out.Offsets, int64(len(out.Features)))
	}
	return out
}

// SortedByUser returns the rows ordered by user id (the canonical order).
// It returns m itself when it is already in that order.
func (m *Matrix) SortedByUser() *Matrix {
	if sort.StringsAreSorted(m.Users) {
		return m
	}
	order := make([]int, len(m.Users))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return m.Users[order[a]] < m.Users[order[b]] })
	return m.Permute(order)
}

// Equal reports whether two matrices hold the same rows in the same order.
func (m *Matrix) Equal(o *Matrix) bool {
	return slices.Equal(m.Users, o.Users) && slices.Equal(m.Offsets, o.Offsets) && slices.Equal(m.Features, o.Features)
}

// NumColumns is the number of distinct feature ids that occur.
func (m *Matrix) NumColumns() int { return len(m.Columns()) }

// Columns returns the distinct feature ids that occur, ascending.
func (m *Matrix) Columns() []uint32 {
	cols := slices.Clone(m.Features)
	slices.Sort(cols)
	return slices.Compact(cols)
}

// DedupePolicy says what to do with a user id that occurs on several rows.
type DedupePolicy int

const (
	// DedupeRefuse makes a repeated user id an error (the default).
	DedupeRefuse DedupePolicy = iota
	// DedupeUnion merges the rows of a repeated user id into one row holding
	// the union of their features, at the first occurrence.
	DedupeUnion
)

// ParseDedupePolicy parses the --dedupe flag: "refuse" or "union".
func ParseDedupePolicy(s string) (DedupePolicy, error) {
	switch s {
	case "", "refuse":
		return DedupeRefuse, nil
	case "union":
		return DedupeUnion, nil
	}
	return 0, fmt.Errorf("invalid dedupe policy %q (want refuse or union)", s)
}

// DuplicateUserError reports a user id that occurs on two rows. It says
// where, never which id: ids are personal data (or pseudonyms, which stay
// out of logs too).
type DuplicateUserError struct {
	// First and Then are the two rows, First the earlier: 0-based rows of
	// FirstFile and ThenFile when the rows were read from files
	// (ReadMatrix), else rows of the matrix.
	First, Then int
	// FirstFile and ThenFile are the files of the two rows; "" for a
	// matrix that was not read from files.
	FirstFile, ThenFile string
}

func (e *DuplicateUserError) Error() string {
	const hint = " (merge repeats, e.g. --dedupe=union)"
	switch {
	case e.ThenFile == "":
		return fmt.Sprintf("row %d: user id repeats row %d%s", e.Then, e.First, hint)
	case e.FirstFile == e.ThenFile:
		return fmt.Sprintf("%s: row %d: user id repeats row %d%s", e.ThenFile, e.Then, e.First, hint)
	}
	return fmt.Sprintf("%s: row %d: user id repeats %s row %d%s", e.ThenFile, e.Then, e.FirstFile, e.First, hint)
}

// UserOrder returns the row numbers of m sorted by user id (rows of equal
// ids in row order), or a *DuplicateUserError for the first repeated id.
func UserOrder(m *Matrix) ([]int32, error) {
	order := make([]int32, m.NumRows())
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return strings.Compare(m.Users[a], m.Users[b]) })
	for i := 1; i < len(order); i++ {
		if m.Users[order[i]] == m.Users[order[i-1]] {
			return nil, &DuplicateUserError{First: int(min(order[i-1], order[i])), Then: int(max(order[i-1], order[i]))}
		}
	}
	return order, nil
}

// rowSources maps the rows of a matrix read from several files to the
// files they came from; nil for a matrix in memory.
type rowSources struct {
	files  []string
	starts []int // starts[i] is the matrix row of files[i]'s row 0
}

// add records that the rows from the matrix's row start on come from path.
func (s *rowSources) add(path string, start int) {
	s.files = append(s.files, path)
	s.starts = append(s.starts, start)
}

// locate returns the file of matrix row r and r's row in it.
func (s *rowSources) locate(r int) (string, int) {
	if s == nil || len(s.files) == 0 {
		return "", r
	}
	i, found := slices.BinarySearch(s.starts, r)
	if !found {
		i--
	}
	// Files without rows share their start with the next file: take the
	// last file starting at or before r.
	for i+1 < len(s.starts) && s.starts[i+1] <= r {
		i++
	}
	return s.files[i], r - s.starts[i]
}

// duplicate is the error for matrix rows first and then holding one id.
func (s *rowSources) duplicate(first, then int) *DuplicateUserError {
	e := &DuplicateUserError{}
	e.FirstFile, e.First = s.locate(first)
	e.ThenFile, e.Then = s.locate(then)
	return e
}

// Dedupe applies policy to repeated user ids. It returns the matrix (m itself
// when nothing repeats) and the number of rows merged away.
func Dedupe(m *Matrix, policy DedupePolicy) (*Matrix, int, error) {
	return dedupe(m, policy, nil)
}

// dedupe is Dedupe, naming the files of src in its errors.
func dedupe(m *Matrix, policy DedupePolicy, src *rowSources) (*Matrix, int, error) {
	first := make(map[string]int, len(m.Users))
	var dups []int
	for i, u := range m.Users {
		if j, ok := first[u]; ok {
			if policy == DedupeRefuse {
				return nil, 0, src.duplicate(j, i)
			}
			dups = append(dups, i)
			continue
		}
		first[u] = i
	}
	if len(dups) == 0 {
		return m, 0, nil
	}
	extra := make(map[int][]uint32) // first row -> features of its later rows
	for _, i := range dups {
		j := first[m.Users[i]]
		extra[j] = append(extra[j], m.Row(i)...)
	}
	isDup := make(map[int]bool, len(dups))
	for _, i := range dups {
		isDup[i] = true
	}
	out := New(len(m.Users)-len(dups), len(m.Features))
	for i, u := range m.Users {
		if isDup[i] {
			continue
		}
		if e, ok := extra[i]; ok {
			out.Append(u, append(slices.Clone(m.Row(i)), e...))
		} else {
			out.Users = append(out.Users, u)
			out.Features = append(out.Features, m.Row(i)...)
			out.Offsets = append(out.Offsets, int64(len(out.Features)))
		}
	}
	return out, len(dups), nil
}
