// Package importer turns public text datasets into smoothanon's sparse
// user×feature matrix (matrix.Matrix).
//
// Every input may be plain text or gzip; gzip is recognised by its magic bytes
// (1f 8b), not by the file name, and a truncated or corrupt gzip stream is an
// error. An input with no records is an error. Errors are *Error values that
// name the file and, where known, the 1-based line and the field.
//
// # Formats
//
// adult — UCI Adult (adult.data): comma-separated, 15 fields per record, no
// header; blank lines are skipped. The 8 categorical attributes workclass,
// education, marital-status, occupation, relationship, race, sex and
// native-country are one-hot encoded; "?" is a value like any other. The six
// numeric fields (age, fnlwgt, education-num, capital-gain, capital-loss,
// hours-per-week) must be non-negative integers but are not encoded; income
// is not a feature: it is returned as the row's label (Stats.Labels), as it
// is written (adult.test writes ">50K." where adult.data writes ">50K"). Feature ids: attributes in the order above, and within an
// attribute the values that occur, sorted by byte order; so attribute a's
// values take the ids after those of attributes 0..a-1, and ids are
// 0..columns-1. The user id of a record is its 0-based record number (blank
// lines not counted) in decimal; rows are in input order. Every row has
// exactly 8 entries. On adult.data this gives 32,561 rows, 102 columns and
// 260,488 entries, as in the paper.
//
// playstore — Kaggle googleplaystore.csv (RFC 4180 CSV with a header of 13
// named columns, CRLF or LF). Preprocessing, in this order:
//
//  1. A row with exactly 12 fields is the known Kaggle defect ("Life Made
//     WI-Fi Touchscreen Photo Frame"): its Category is missing and the other
//     fields are shifted left, so an empty Category is inserted. Any other
//     field count is an error.
//  2. Rows whose Android Ver is "Varies with device" are dropped.
//  3. Rows repeating an App name already kept are dropped (first row wins).
//
// The user id is the App name; rows are in input order. Ten attributes are
// one-hot encoded, so every row has exactly 10 entries:
//
//	Category, Rating (raw text), Reviews (binned by decimal digits: "0",
//	"1-9", "10-99", ...; a zero fraction as in "19.0" is allowed), Size
//	(whole megabytes rounded down: "8.7M" is "8M", "201k" is "0M"; "Varies
//	with device" kept as a value), Installs, Type, Price, Content Rating,
//	Genres (the whole string, e.g. "Action;Puzzle") and Android Ver.
//
// An empty value counts as "NaN", the dataset's own marker for a missing
// value. App, Last Updated and Current Ver are not encoded. Feature ids are
// assigned as for adult: attributes in the order above, values (their
// labels) in byte order within each attribute. On googleplaystore.csv this
// gives 8,672 rows, 452 columns and 86,720 entries. The paper reports
// 8,672 × 521 with 86,720 entries but does not describe its preprocessing;
// steps 2 and 3 were chosen because they give its row count, while its 521
// columns are not reproduced.
//
// edges — SNAP-style edge lists: one edge "src dst" per line, separated by
// spaces or tabs; '#' comment lines and blank lines are skipped. Node ids are
// decimal integers in [0, 2^32). The user id is the source node id in decimal
// and the feature is the target node id, kept as is (not renumbered). With
// Options.Undirected every edge also adds its reverse. Repeated edges are
// merged; a self-loop is an ordinary entry. Every node that occurs, as source
// or target, becomes a row, so a node without out-edges is an empty row (with
// Undirected there are none). Rows are in ascending numeric node order. On
// com-dblp with Undirected this gives 317,080 rows and 2,099,732 entries.
//
// pairs — one "user<TAB>feature" pair per line, feature a decimal uint32; the
// user id is the text before the first tab, taken verbatim, and must not be
// empty. '#' comment lines and blank lines are skipped; repeated pairs are
// merged. Rows are in order of the user's first appearance.
//
// A trailing carriage return is removed from every line, and a UTF-8 byte
// order mark from the start of the input, in all formats.
//
// None of the four formats can produce two rows with the same user id (adult
// numbers records, playstore keeps the first row per App, edges and pairs
// group lines by user). Options.Dedupe (refuse by default, or union, see
// matrix.Dedupe) is still applied to adult and playstore results as a
// safety net; edges and pairs, the formats for large inputs, skip that pass.
package importer

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/smoothanon/smoothanon/matrix"
)

// Format names accepted by Import.
const (
	FormatAdult     = "adult"
	FormatPlaystore = "playstore"
	FormatEdges     = "edges"
	FormatPairs     = "pairs"
)

// Formats lists the accepted format names.
func Formats() []string {
	return []string{FormatAdult, FormatPlaystore, FormatEdges, FormatPairs}
}

// Options control an import.
type Options struct {
	// Undirected adds the reverse of every edge. Optional; default false;
	// only valid with the edges format.
	Undirected bool
	// Dedupe says what to do with repeated user ids. Optional; default
	// matrix.DedupeRefuse.
	Dedupe matrix.DedupePolicy
}

// Stats describes what an import read and kept.
type Stats struct {
	Format string
	// Lines is the number of input lines read (for playstore: CSV records,
	// header included).
	Lines int64
	// Records is the number of data records, edges or pairs read.
	Records int64
	// Skipped is the number of blank and comment lines.
	Skipped int64
	// RepairedRows counts playstore rows with 12 fields, given an empty
	// Category.
	RepairedRows int
	// DroppedVaries counts playstore rows whose Android Ver is "Varies with
	// device".
	DroppedVaries int
	// DroppedDuplicates counts playstore rows repeating an App name.
	DroppedDuplicates int
	// RepeatedEntries counts repeated (user, feature) pairs that were merged.
	RepeatedEntries int64
	// SelfLoops counts edges whose source is their target.
	SelfLoops int64
	// EmptyRows counts rows without features (edges: nodes without out-edges).
	EmptyRows int
	// MergedRows counts rows merged by matrix.DedupeUnion.
	MergedRows int
	// Columns is the number of distinct feature ids.
	Columns int
	// FeatureNames names each feature id of a one-hot format
	// ("attribute=value"); nil for edges and pairs.
	FeatureNames []string
	// Labels holds adult's income field (the classification label, never
	// a feature) of each row, in row order; nil for the other formats.
	Labels []string
}

// Error is an error in an input file.
type Error struct {
	Path  string
	Line  int64  // 1-based line, 0 if unknown
	Field string // e.g. `field 3 (fnlwgt)`; empty if unknown
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Sentinel causes, testable with errors.Is.
var (
	ErrEmpty         = errors.New("empty input: no records")
	ErrTruncatedGzip = errors.New("truncated gzip input (unexpected end of compressed stream)")
	ErrCorruptGzip   = errors.New("corrupt gzip input")
)

// CheckOptions checks a format name and options before any input is read.
func CheckOptions(format string, opts Options) error {
	if !slices.Contains(Formats(), format) {
		return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats(), ", "))
	}
	if opts.Undirected && format != FormatEdges {
		return fmt.Errorf("undirected applies only to the edges format, not %q", format)
	}
	if opts.Dedupe != matrix.DedupeRefuse && opts.Dedupe != matrix.DedupeUnion {
		return fmt.Errorf("invalid dedupe policy %d", opts.Dedupe)
	}
	return nil
}

// Import reads the file input in the given format.
func Import(format, input string, opts Options) (*matrix.Matrix, Stats, error) {
	if err := CheckOptions(format, opts); err != nil {
		return nil, Stats{Format: format}, err
	}
	r, err := Open(input)
	if err != nil {
		return nil, Stats{Format: format}, err
	}
	defer r.Close()
	return Read(format, r, input, opts)
}

// Read reads r, named name in errors, in the given format. r must already be
// decompressed (see Open).
func Read(format string, r io.Reader, name string, opts Options) (*matrix.Matrix, Stats, error) {
	if err := CheckOptions(format, opts); err != nil {
		return nil, Stats{Format: format}, err
	}
	switch format {
	case FormatAdult:
		return Adult(r, name, opts)
	case FormatPlaystore:
		return Playstore(r, name, opts)
	case FormatEdges:
		return Edges(r, name, opts)
	default:
		return Pairs(r, name, opts)
	}
}

// Open opens path for reading, decompressing it when it starts with the gzip
// magic bytes. Read errors from the returned reader are *Error values.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // *fs.PathError already names the file
	}
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		f.Close()
		return nil, &Error{Path: path, Err: errors.New("is a directory")}
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileReader{Reader: r, f: f}, nil
}

type fileReader struct {
	io.Reader
	f *os.File
}

func (r *fileReader) Close() error { return r.f.Close() }

// NewReader returns r, transparently decompressed when it starts with the
// gzip magic bytes; name is used in errors.
func NewReader(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, &Error{Path: name, Err: err}
	}
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return &errReader{r: br, name: name}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, &Error{Path: name, Err: gzipErr(err)}
	}
	return &errReader{r: zr, name: name, gz: true}, nil
}

// errReader turns read errors into *Error values naming the file.
type errReader struct {
	r    io.Reader
	name string
	gz   bool
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		if e.gz {
			err = gzipErr(err)
		}
		err = &Error{Path: e.name, Err: err}
	}
	return n, err
}

func gzipErr(err error) error {
	var ce flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return ErrTruncatedGzip
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.As(err, &ce):
		return fmt.Errorf("%w: %v", ErrCorruptGzip, err)
	}
	return err
}

// lineReader yields lines without their trailing "\n" or "\r\n", without
// allocating per line. A line is valid until the next call.
type lineReader struct {
	br   *bufio.Reader
	name string
	line int64 // number of the line last returned
	long []byte
	err  error
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 256<<10), name: name}
}

// next returns the next line, or ok=false at the end or on error (see err).
func (l *lineReader) next() (line []byte, ok bool) {
	if l.err != nil {
		return nil, false
	}
	b, err := l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	if err != nil {
		if err != io.EOF {
			l.err = err
			var ie *Error
			if !errors.As(err, &ie) {
				l.err = &Error{Path: l.name, Line: l.line + 1, Err: err}
			}
			return nil, false
		}
		if len(b) == 0 {
			l.err = io.EOF
			return nil, false
		}
	}
	l.line++
	if l.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\ufeff")) // a UTF-8 byte order mark
	}
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	return b, true
}

// failure returns the read error that ended next, or nil at a clean end.
func (l *lineReader) failure() error {
	if l.err == io.EOF {
		return nil
	}
	return l.err
}

// errorf makes an *Error at the current line.
func (l *lineReader) errorf(field, format string, args ...any) error {
	return &Error{Path: l.name, Line: l.line, Field: field, Err: fmt.Errorf(format, args...)}
}

// isSkippable reports a blank line or a '#' comment line.
func isSkippable(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return c == '#'
		}
	}
	return true
}

// quote quotes input text for an error, shortened to at most 64 bytes.
func quote[T string | []byte](b T) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "..."
	}
	return strconv.Quote(string(b))
}

// errNumber is the cause of a bad unsigned number.
type errNumber string

func (e errNumber) Error() string { return string(e) }

// parseUint32 parses a decimal uint32 without allocating.
func parseUint32(b []byte) (uint32, error) {
	if len(b) == 0 {
		return 0, errNumber("empty number")
	}
	if b[0] == '-' {
		return 0, errNumber(fmt.Sprintf("negative id %s", quote(b)))
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errNumber(fmt.Sprintf("not a non-negative integer: %s", quote(b)))
		}
		v = v*10 + uint64(c-'0')
		if v > 1<<32-1 {
			return 0, errNumber(fmt.Sprintf("id %s out of range [0, 4294967295]", quote(b)))
		}
	}
	return uint32(v), nil
}

// finish applies the dedupe policy, checks for emptiness and fills Columns.
// unique says the user ids are distinct by construction, which saves the
// dedupe pass.
func finish(m *matrix.Matrix, st *Stats, name string, opts Options, unique bool) (*matrix.Matrix, Stats, error) {
	if m.NumRows() == 0 {
		return nil, *st, &Error{Path: name, Err: ErrEmpty}
	}
	m2 := m
	if !unique {
		var merged int
		var err error
		m2, merged, err = matrix.Dedupe(m, opts.Dedupe)
		if err != nil {
			return nil, *st, &Error{Path: name, Err: err}
		}
		st.MergedRows = merged
	}
	st.EmptyRows = 0
	for i := range m2.Users {
		if m2.Offsets[i+1] == m2.Offsets[i] {
			st.EmptyRows++
		}
	}
	if st.FeatureNames != nil {
		st.Columns = len(st.FeatureNames)
	} else {
		st.Columns = countDistinct(m2.Features)
	}
	return m2, *st, nil
}

// countDistinct counts distinct values without a map when they are dense.
func countDistinct(f []uint32) int {
	if len(f) == 0 {
		return 0
	}
	mx := slices.Max(f)
	if uint64(mx) < 64*uint64(len(f))+1024 {
		bits := make([]uint64, uint64(mx)/64+1)
		n := 0
		for _, v := range f {
			w, b := v/64, uint64(1)<<(v%64)
			if bits[w]&b == 0 {
				bits[w] |= b
				n++
			}
		}
		return n
	}
	s := slices.Clone(f)
	slices.Sort(s)
	return len(slices.Compact(s))
}
