package matrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/smoothanon/smoothanon/storage"
)

// The Parquet schema of a row: a required string user_id and the canonical
// three-level LIST of feature ids (INT32 annotated unsigned), zstd-compressed.
//
//	message row {
//	  required binary user_id (STRING);
//	  optional group features (LIST) { repeated group list { required int32 element (INTEGER(32,false)); } }
//	}
//
// The reader is more lenient: features may be INT32 or INT64, signed or not,
// and a list may be null (an empty row); ids must lie in [0, 2^32).
const (
	ColUserID   = "user_id"
	ColFeatures = "features"
)

// DefaultRowGroupRows is the number of rows per row group written; row groups
// are the unit a reader splits work on.
const DefaultRowGroupRows = 64 * 1024

type parquetRow struct {
	UserID   string   `parquet:"user_id"`
	Features []uint32 `parquet:"features,list"`
}

// pairRow is the schema of the long form Writer writes: one row per
// (user, feature) pair, the feature an INT64 as warehouses export ids.
type pairRow struct {
	UserID  string `parquet:"user_id"`
	Feature int64  `parquet:"feature"`
}

// The schemas of named features, written back as the input held them:
// strings, or integers as INT64.
type (
	stringsRow struct {
		UserID   string   `parquet:"user_id"`
		Features []string `parquet:"features,list"`
	}
	integersRow struct {
		UserID   string  `parquet:"user_id"`
		Features []int64 `parquet:"features,list"`
	}
	stringPairRow struct {
		UserID  string `parquet:"user_id"`
		Feature string `parquet:"feature"`
	}
)

// FileError is an error tied to an input file, and where known a row and column.
type FileError struct {
	Path   string
	Row    int64 // 0-based row in the file, -1 if unknown
	Column string
	Err    error
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Row >= 0 {
		fmt.Fprintf(&b, ": row %d", e.Row)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, ": column %s", e.Column)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *FileError) Unwrap() error { return e.Err }

// File is an open Parquet file of rows whose schema has been checked.
type File struct {
	Path string
	f    storage.File
	pf   *parquet.File
	size int64

	layout           Layout // resolved: shape and columns
	userCol, featCol int    // leaf column indexes
	featMaxDef       int    // definition level of a present feature id
	featListDef      int    // definition level at which the list is present and non-empty
	featKind         parquet.Kind
	featSigned       bool
	vocab            *Vocab // named features: their ids (UseVocab)
	keyBuf           []byte
}

// OpenFile is OpenFileAs with the default Layout: the shape from the
// schema, columns user_id and features (list form) or feature (long
// form).
func OpenFile(path string) (*File, error) { return OpenFileAs(path, Layout{}) }

// OpenFileAs opens a Parquet file (local or a URI, see storage.Open) and
// checks that it has the string user column and the integer feature
// column of l: a list column in list form, a scalar one in long form
// (l.Shape ShapeAuto takes the form the column has). Remote files are read by ranges: a row group is fetched without
// the rest of its file. A local path must be a regular file: a named
// pipe, socket or device is refused before it is opened (opening a FIFO
// would block until a writer came).
func OpenFileAs(path string, l Layout) (*File, error) {
	if storage.IsLocal(path) {
		if err := checkRegular(path); err != nil {
			return nil, err
		}
	}
	f, err := storage.Open(context.Background(), path)
	if err != nil {
		var se *storage.Error
		if errors.As(err, &se) {
			return nil, &FileError{Path: path, Row: -1, Err: se.Err}
		}
		return nil, &FileError{Path: path, Row: -1, Err: errors.Unwrap(err)}
	}
	pfile, err := openReader(path, f, f.Size(), l)
	if err != nil {
		f.Close()
		return nil, err
	}
	pfile.f = f
	return pfile, nil
}

// checkRegular refuses a local path that is not a regular file, as
// "PATH: is a named pipe, not a regular file" (storage.Stat's causes); a
// missing file is left to the open that follows.
func checkRegular(path string) error {
	_, err := storage.Stat(context.Background(), path)
	var pe *fs.PathError
	if err == nil || errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		return nil
	}
	return &FileError{Path: path, Row: -1, Err: pe.Err}
}

// openReader is OpenFileAs on the size bytes of r, named path in errors;
// the File's Close does nothing.
func openReader(path string, r io.ReaderAt, size int64, l Layout) (*File, error) {
	pf, err := openParquet(r, size)
	if err != nil {
		return nil, &FileError{Path: path, Row: -1, Err: fmt.Errorf("not a readable Parquet file: %v", err)}
	}
	pfile := &File{Path: path, pf: pf, size: size}
	if err := pfile.checkSchema(l); err != nil {
		return nil, err
	}
	return pfile, nil
}

func openParquet(r io.ReaderAt, size int64) (pf *parquet.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt file: %v", p)
		}
	}()
	return parquet.OpenFile(r, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true), parquet.ReadBufferSize(1<<20))
}

func (pf *File) schemaErr(col, format string, args ...any) error {
	return &FileError{Path: pf.Path, Row: -1, Column: col, Err: fmt.Errorf(format, args...)}
}

func (pf *File) checkSchema(l Layout) error {
	user, feats, err := pf.resolveLayout(l)
	if err != nil {
		return err
	}
	un, fn := pf.layout.User, pf.layout.Feature
	if !user.Leaf() || user.Type().Kind() != parquet.ByteArray || user.Repeated() {
		return pf.schemaErr(un, "wrong type %s, want a string", user.Type())
	}
	pf.userCol = user.Index()
	// features: a list (any nesting of groups with exactly one repeated
	// level) of scalar leaves, or in long form a scalar leaf.
	want := "a LIST of integers or strings"
	if pf.layout.Shape == ShapeLong {
		want = "an integer or a string"
	}
	leaf := feats
	for !leaf.Leaf() {
		cs := leaf.Columns()
		if len(cs) != 1 {
			return pf.schemaErr(fn, "wrong type: want %s", want)
		}
		leaf = cs[0]
	}
	if pf.layout.Shape == ShapeList && leaf.MaxRepetitionLevel() != 1 {
		return pf.schemaErr(fn, "wrong type: want a LIST of integers or strings, got repetition depth %d", leaf.MaxRepetitionLevel())
	}
	if err := pf.checkFeatureType(leaf, l.Values); err != nil {
		return err
	}
	pf.featCol = leaf.Index()
	pf.featMaxDef = leaf.MaxDefinitionLevel()
	// The definition level reached at the repeated node: a value with at least
	// this level stands for an element slot (present or null).
	pf.featListDef = 0
	for c := feats; ; {
		if !c.Required() {
			pf.featListDef++
		}
		if c.Repeated() || c.Leaf() {
			break
		}
		c = c.Columns()[0]
	}
	return nil
}

// checkFeatureType checks the feature leaf's type against values and
// resolves the layout's Values: a string column holds names, an integer
// column ids unless values asks for names.
func (pf *File) checkFeatureType(leaf *parquet.Column, values Values) error {
	long := pf.layout.Shape == ShapeLong
	what := pick(long, "feature", "element")
	k := leaf.Type().Kind()
	if values == ValuesAuto && pf.markedNames() {
		values = ValuesNames
	}
	switch {
	case k == parquet.ByteArray && values != ValuesIDs:
		if ann := nonString(leaf.Type()); ann != "" {
			return pf.schemaErr(pf.layout.Feature, "wrong %s type %s (%s), want a string or an integer", what, k, ann)
		}
		pf.layout.Values = ValuesStrings
	case k == parquet.ByteArray:
		return pf.schemaErr(pf.layout.Feature, "wrong %s type %s: feature ids are integers (--feature_values names maps strings to ids)", what, k)
	case k != parquet.Int32 && k != parquet.Int64:
		return pf.schemaErr(pf.layout.Feature, "wrong %s type %s, want INT32, INT64 or a string", what, leaf.Type())
	default:
		// An INT32 or INT64 annotated as anything but an integer (a
		// date, a time, a timestamp, a decimal) holds no ids: its
		// numbers would be read as features silently.
		if ann := nonInteger(leaf.Type()); ann != "" {
			return pf.schemaErr(pf.layout.Feature, "wrong %s type %s (%s), want an integer", what, k, ann)
		}
		pf.layout.Values = ValuesIDs
		if values.Named() {
			pf.layout.Values = ValuesIntegers
		}
	}
	pf.featKind = k
	pf.featSigned = true
	if lt := leaf.Type().LogicalType(); lt != nil {
		if it, ok := lt.Value.(*format.IntType); ok {
			pf.featSigned = it.IsSigned
		}
	}
	if ct := leaf.Type().ConvertedType(); ct != nil && *ct >= deprecated.Uint8 && *ct <= deprecated.Uint64 {
		pf.featSigned = false
	}
	return nil
}

// nonString names the annotation of the BYTE_ARRAY type t when it is not
// a string one (logical STRING or ENUM, converted UTF8 or ENUM, or none),
// else "".
func nonString(t parquet.Type) string {
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		switch lt.Value.(type) {
		case *format.StringType, *format.EnumType:
			return ""
		}
		return lt.String()
	}
	if ct := t.ConvertedType(); ct != nil && *ct != deprecated.UTF8 && *ct != deprecated.Enum {
		return fmt.Sprintf("converted type %d", *ct)
	}
	return ""
}

// markedNames says the file is a release of named features
// (MetaFeatureValues).
func (pf *File) markedNames() bool {
	v, ok := pf.Metadata(MetaFeatureValues)
	return ok && v == "names"
}

// nonInteger names the annotation of t when it is not an integer one
// (logical type INTEGER, converted types INT_n and UINT_n), else "".
func nonInteger(t parquet.Type) string {
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		if _, ok := lt.Value.(*format.IntType); !ok {
			return lt.String()
		}
		return ""
	}
	if ct := t.ConvertedType(); ct != nil && (*ct < deprecated.Uint8 || *ct > deprecated.Int64) {
		if name, ok := convertedNames[*ct]; ok {
			return name
		}
		return fmt.Sprintf("converted type %d", *ct)
	}
	return ""
}

// convertedNames names the converted types an INT32 or INT64 may carry
// that are not integers, as the Parquet format spells them.
var convertedNames = map[deprecated.ConvertedType]string{
	deprecated.Decimal:         "DECIMAL",
	deprecated.Date:            "DATE",
	deprecated.TimeMillis:      "TIME_MILLIS",
	deprecated.TimeMicros:      "TIME_MICROS",
	deprecated.TimestampMillis: "TIMESTAMP_MILLIS",
	deprecated.TimestampMicros: "TIMESTAMP_MICROS",
}

// pick is a if cond, else b.
func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

func columnNames(root *parquet.Column) string {
	var names []string
	for _, c := range root.Columns() {
		names = append(names, c.Name())
	}
	if len(names) == 0 {
		return "no columns"
	}
	return strings.Join(names, ", ")
}

// ReadStats counts the ranged reads made so far (zero for a File opened
// on a reader).
func (pf *File) ReadStats() storage.ReadStats {
	if pf.f == nil {
		return storage.ReadStats{}
	}
	return pf.f.Stats()
}

// Close closes the file.
func (pf *File) Close() error {
	if pf.f == nil {
		return nil
	}
	return pf.f.Close()
}

// Size is the file's length in bytes.
func (pf *File) Size() int64 { return pf.size }

// NumRows is the number of rows in the file.
func (pf *File) NumRows() int64 { return pf.pf.NumRows() }

// FeatureValues is the number of values of the features column by the
// footer: the rows' feature ids, plus one for every row without any. It
// is at least the file's entries.
func (pf *File) FeatureValues() int64 {
	var n int64
	for _, rg := range pf.pf.RowGroups() {
		n += rg.ColumnChunks()[pf.featCol].NumValues()
	}
	return n
}

// NumRowGroups is the number of row groups, the unit of split reading.
func (pf *File) NumRowGroups() int { return len(pf.pf.RowGroups()) }

// RowGroupRows is the number of rows in row group g.
func (pf *File) RowGroupRows(g int) int64 { return pf.pf.RowGroups()[g].NumRows() }

// RowFunc receives one row. The features slice is sorted, free of repeats and
// reused after the call returns; user is a fresh string of valid UTF-8 (a
// file holding another user id is refused). A row of a long-form file
// holds exactly one feature: the same user may come again on later rows,
// in this file or others.
type RowFunc func(user string, features []uint32) error

// ReadRowGroup streams the rows of row group g to fn, in file order.
func (pf *File) ReadRowGroup(g int, fn RowFunc) (err error) {
	rgs := pf.pf.RowGroups()
	if g < 0 || g >= len(rgs) {
		return &FileError{Path: pf.Path, Row: -1, Err: fmt.Errorf("row group %d out of range [0,%d)", g, len(rgs))}
	}
	var rowBase int64
	for i := 0; i < g; i++ {
		rowBase += rgs[i].NumRows()
	}
	row := rowBase
	defer func() {
		if p := recover(); p != nil {
			err = &FileError{Path: pf.Path, Row: row, Err: fmt.Errorf("corrupt data: %v", p)}
		}
	}()
	rg := rgs[g]
	chunks := rg.ColumnChunks()
	users := newCursor(chunks[pf.userCol].Pages())
	defer users.close()
	feats := newCursor(chunks[pf.featCol].Pages())
	defer feats.close()
	var buf []uint32
	n := rg.NumRows()
	long := pf.layout.Shape == ShapeLong
	for i := int64(0); i < n; i++ {
		row = rowBase + i
		uv, err := users.next()
		if err != nil {
			return &FileError{Path: pf.Path, Row: row, Column: pf.layout.User, Err: truncErr(err)}
		}
		if uv.IsNull() {
			return &FileError{Path: pf.Path, Row: row, Column: pf.layout.User, Err: errors.New("null user id")}
		}
		ub := uv.ByteArray()
		if !utf8.Valid(ub) {
			// The id's bytes stay out of the message: it is personal data.
			return &FileError{Path: pf.Path, Row: row, Column: pf.layout.User, Err: errors.New("not valid UTF-8")}
		}
		user := string(ub)
		buf = buf[:0]
		if long {
			v, err := feats.next()
			if err != nil {
				return &FileError{Path: pf.Path, Row: row, Column: pf.layout.Feature, Err: truncErr(err)}
			}
			if v.DefinitionLevel() < pf.featMaxDef {
				return &FileError{Path: pf.Path, Row: row, Column: pf.layout.Feature, Err: errors.New("null feature")}
			}
			id, err := pf.featureID(v)
			if err != nil {
				return &FileError{Path: pf.Path, Row: row, Column: pf.layout.Feature, Err: err}
			}
			if err := fn(user, append(buf, id)); err != nil {
				return err
			}
			continue
		}
		first := true
		for {
			if !first {
				pv, ok, err := feats.peek()
				if err != nil {
					return &FileError{Path: pf.Path, Row: row, Column: pf.layout.Feature, Err: truncErr(err)}
				}
				if !ok || pv.RepetitionLevel() == 0 {
					break
				}
			}
			v, err := feats.next()
			if err != nil {
				return &FileError{Path: pf.Path, Row: row, Column: pf.layout.Feature, Err: truncErr(err)}
			}
			if first && v.RepetitionLevel() != 0 {
				return &FileError{Path: pf.Path, Row: row, Column: pf.layout.Feature, Err: errors.New("corrupt repetition levels")}
			}
			first = false
			d := v.DefinitionLevel()
			if d < pf.featListDef {
				continue // null or empty list
			}
			if d < pf.featMaxDef {
				return &FileError{Path: pf.Path, Row: row, Column: pf.layout.Feature, Err: errors.New("null feature id")}
			}
			id, err := pf.featureID(v)
			if err != nil {
				return &FileError{Path: pf.Path, Row: row, Column: pf.layout.Feature, Err: err}
			}
			buf = append(buf, id)
		}
		if !isStrictlySorted(buf) {
			sortUnique(&buf)
		}
		if err := fn(user, buf); err != nil {
			return err
		}
	}
	return nil
}

func truncErr(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("truncated column data")
	}
	return err
}

func (pf *File) featureID(v parquet.Value) (uint32, error) {
	if pf.layout.Values.Named() {
		return pf.nameID(v)
	}
	var x int64
	switch pf.featKind {
	case parquet.Int32:
		if pf.featSigned {
			x = int64(v.Int32())
		} else {
			x = int64(v.Uint32())
		}
	case parquet.Int64:
		if pf.featSigned {
			x = v.Int64()
		} else {
			u := v.Uint64()
			if u > 1<<32-1 {
				return 0, fmt.Errorf("feature id %d out of range [0, 2^32)", u)
			}
			x = int64(u)
		}
	}
	if x < 0 || x > 1<<32-1 {
		return 0, fmt.Errorf("feature id %d out of range [0, 2^32)", x)
	}
	return uint32(x), nil
}

// UseVocab makes the file's named features read as their ids in v, which
// must hold names of the file's kind. Without it, the file gives its
// names ids in order of first appearance, its own.
func (pf *File) UseVocab(v *Vocab) error {
	if v.Values() != pf.layout.Values {
		return &FileError{Path: pf.Path, Row: -1, Column: pf.layout.Feature,
			Err: fmt.Errorf("%v, but the vocabulary is of %v", pf.layout.Values, v.Values())}
	}
	pf.vocab = v
	return nil
}

// nameID is the id of the named feature v.
func (pf *File) nameID(v parquet.Value) (uint32, error) {
	if pf.vocab == nil {
		pf.vocab = NewGrowingVocab(pf.layout.Values)
	}
	var key []byte
	if pf.layout.Values == ValuesStrings {
		if key = v.ByteArray(); !utf8.Valid(key) {
			// The name's bytes stay out of the message: it is input data.
			return 0, errors.New("feature not valid UTF-8")
		}
	} else {
		x := v.Int64()
		switch {
		case pf.featKind == parquet.Int32 && pf.featSigned:
			x = int64(v.Int32())
		case pf.featKind == parquet.Int32:
			x = int64(v.Uint32())
		case !pf.featSigned && v.Uint64() > 1<<63-1:
			return 0, fmt.Errorf("feature %d out of the INT64 range", v.Uint64())
		}
		key = IntNameKey(pf.keyBuf[:0], x)
		pf.keyBuf = key
	}
	return pf.vocab.ID(key)
}

func sortUnique(b *[]uint32) {
	s := *b
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	*b = out
}

// ReadAll streams every row group to fn.
func (pf *File) ReadAll(fn RowFunc) error {
	for g := 0; g < pf.NumRowGroups(); g++ {
		if err := pf.ReadRowGroup(g, fn); err != nil {
			return err
		}
	}
	return nil
}

// cursor walks the values of one column chunk across its pages.
type cursor struct {
	pages parquet.Pages
	page  parquet.Page
	vr    parquet.ValueReader
	buf   []parquet.Value
	pos   int
	done  bool
}

func newCursor(p parquet.Pages) *cursor {
	return &cursor{pages: p, buf: make([]parquet.Value, 0, 1024)}
}

func (c *cursor) fill() error {
	for c.pos >= len(c.buf) {
		if c.done {
			return io.EOF
		}
		if c.vr == nil {
			if c.page != nil {
				parquet.Release(c.page)
				c.page = nil
			}
			p, err := c.pages.ReadPage()
			if err != nil {
				if err == io.EOF {
					c.done = true
				}
				return err
			}
			c.page = p
			c.vr = p.Values()
		}
		n, err := c.vr.ReadValues(c.buf[:cap(c.buf)])
		c.buf = c.buf[:n]
		c.pos = 0
		if err == io.EOF {
			c.vr = nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

func (c *cursor) next() (parquet.Value, error) {
	if err := c.fill(); err != nil {
		return parquet.Value{}, err
	}
	v := c.buf[c.pos]
	c.pos++
	return v, nil
}

func (c *cursor) peek() (parquet.Value, bool, error) {
	if err := c.fill(); err != nil {
		if err == io.EOF {
			return parquet.Value{}, false, nil
		}
		return parquet.Value{}, false, err
	}
	return c.buf[c.pos], true, nil
}

func (c *cursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
	}
	c.pages.Close()
}

// Read streams every row of every file of the input spec (see ListFiles;
// every file is opened with OpenInput) to fn, in sorted file order.
func Read(spec string, fn RowFunc) error {
	files, err := ListFiles(spec)
	if err != nil {
		return err
	}
	for _, p := range files {
		pf, err := OpenInput(p)
		if err != nil {
			return err
		}
		err = pf.ReadAll(fn)
		pf.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadOptions control ReadMatrix.
type ReadOptions struct {
	// Dedupe says what to do with repeated user ids in list form.
	// Optional; default refuse. In long form a user's rows are merged
	// whatever it says: that is the form.
	Dedupe DedupePolicy
	// AllowEmpty accepts an input with no rows. Optional; default false.
	AllowEmpty bool
	// Layout is the input's shape and columns. Optional; default the zero
	// Layout (shape from the schema, default column names).
	Layout Layout
	// Vocab is the vocabulary named features are read through (a growing
	// one gains the names it lacks). Optional; default the input's own,
	// sorted (SortedVocab): a feature's id is its name's rank, as the
	// pipeline numbers them.
	Vocab *Vocab
}

// ReadStats describes what ReadMatrix did.
type ReadStats struct {
	Files         int
	MergedRows    int // rows merged away by DedupeUnion
	DroppedRepeat int // repeated feature ids dropped inside rows
	// Layout is the input's resolved layout, the same for every file.
	Layout Layout
	// Pairs is the number of rows of a long-form input, repeats included;
	// 0 in list form.
	Pairs int64
	// DroppedPairs is the number of repeated (user, feature) rows of a
	// long-form input, dropped.
	DroppedPairs int64
	// Vocab is the vocabulary the features' ids stand for when they are
	// names (Layout.Values.Named()), else nil.
	Vocab *Vocab
}

// InspectFiles opens every file of files with OpenInputAs(l) and checks
// that they share one layout (Agree), which it returns with the rows and
// feature values their footers count. It reads footers only.
func InspectFiles(files []string, l Layout) (lay Layout, rows, values int64, err error) {
	for i, p := range files {
		pf, err := OpenInputAs(p, l)
		if err != nil {
			return lay, 0, 0, err
		}
		if i == 0 {
			lay = pf.Layout()
		} else if err := Agree(p, pf.Layout(), files[0], lay); err != nil {
			pf.Close()
			return lay, 0, 0, err
		}
		rows += pf.NumRows()
		values += pf.FeatureValues()
		pf.Close()
	}
	return lay, rows, values, nil
}

// ReadMatrix reads every row of the input spec (see ListFiles; every file
// is opened with OpenInputAs(opts.Layout), and all must share one
// layout) into memory. In list form a repeated user id is a
// *DuplicateUserError naming the files and rows of both occurrences,
// unless opts.Dedupe merges them. In long form the rows of each user are
// gathered into one row, users in the order of their first rows, and
// repeated pairs dropped.
func ReadMatrix(spec string, opts ReadOptions) (*Matrix, ReadStats, error) {
	var st ReadStats
	files, err := ListFiles(spec)
	if err != nil {
		return nil, st, err
	}
	st.Files = len(files)
	if st.Layout, _, _, err = InspectFiles(files, opts.Layout); err != nil {
		return nil, st, err
	}
	m := New(0, 0)
	src := &rowSources{}
	var g *grouper
	if st.Layout.Shape == ShapeLong {
		g = newGrouper()
	}
	if st.Layout.Values.Named() {
		if st.Vocab = opts.Vocab; st.Vocab == nil {
			st.Vocab = NewGrowingVocab(st.Layout.Values)
		}
	}
	for _, p := range files {
		pf, err := OpenInputAs(p, st.Layout)
		if err == nil && st.Vocab != nil {
			err = pf.UseVocab(st.Vocab)
		}
		if err != nil {
			return nil, st, err
		}
		if g != nil {
			err = pf.ReadAll(g.add)
		} else {
			src.add(p, m.NumRows())
			err = pf.appendTo(m)
		}
		pf.Close()
		if err != nil {
			return nil, st, err
		}
	}
	if g != nil {
		m, st.Pairs, st.DroppedPairs = g.matrix()
		src = nil
	}
	if st.Vocab != nil && opts.Vocab == nil {
		if st.Vocab, err = sortVocab(m, st.Vocab); err != nil {
			return nil, st, err
		}
	}
	return finishRead(spec, m, src, opts, st)
}

// sortVocab renumbers m's features, ids of v, as the ranks of their names
// (SortedVocab), and returns the sorted vocabulary.
func sortVocab(m *Matrix, v *Vocab) (*Vocab, error) {
	keys := make([][]byte, v.Len())
	for id := range keys {
		keys[id] = v.Key(uint32(id))
	}
	sorted, err := SortedVocab(v.Values(), slices.Clone(keys))
	if err != nil {
		return nil, err
	}
	rank := make([]uint32, len(keys))
	for id, k := range keys {
		rank[id], _ = sorted.Lookup(k)
	}
	for i := range m.Features {
		m.Features[i] = rank[m.Features[i]]
	}
	for i := range m.Users {
		slices.Sort(m.Row(i))
	}
	return sorted, nil
}

// appendTo appends every row of pf to m.
func (pf *File) appendTo(m *Matrix) error {
	return pf.ReadAll(func(u string, f []uint32) error {
		m.Users = append(m.Users, u)
		m.Features = append(m.Features, f...)
		m.Offsets = append(m.Offsets, int64(len(m.Features)))
		return nil
	})
}

// finishRead applies ReadMatrix's checks and deduplication to the rows m
// read from spec, from the files of src (nil: spec names the rows in
// errors).
func finishRead(spec string, m *Matrix, src *rowSources, opts ReadOptions, st ReadStats) (*Matrix, ReadStats, error) {
	if m.NumRows() == 0 && !opts.AllowEmpty {
		return nil, st, fmt.Errorf("%s: empty input (no rows)", spec)
	}
	m2, merged, err := dedupe(m, opts.Dedupe, src)
	if err != nil {
		if src == nil {
			err = fmt.Errorf("%s: %w", spec, err)
		}
		return nil, st, err
	}
	st.MergedRows = merged
	return m2, st, nil
}

// Writer writes rows to a Parquet file or object. It appears under its
// final name only when Close succeeds (storage.Writer); Abort or a failed
// Close leave nothing behind.
type Writer struct {
	path     string
	out      *storage.Writer
	add      func(user string, features []uint32) error // writes a user's rows
	sink     rowSink                                    // the buffer add fills
	long     bool
	rows     int64 // users
	fileRows int64 // Parquet rows: users, or in long form pairs
	err      error
}

// WriterOptions control a Writer.
type WriterOptions struct {
	// RowGroupRows is the number of Parquet rows per row group (in long
	// form, pairs). Optional; default DefaultRowGroupRows.
	RowGroupRows int64
	// Metadata is written to the file's key/value metadata, in key order.
	// Optional; default none (the file's bytes are then as without it).
	Metadata map[string]string
	// Shape is the file's shape: ShapeList, columns ColUserID and
	// ColFeatures (a list of UINT32), or ShapeLong, one row per feature
	// of a user, columns ColUserID and ColFeature (INT64); a user without
	// features has no row in long form. Optional; default ShapeList.
	Shape Shape
	// Vocab names the features: the file holds each feature's name, a
	// string or an INT64 as Vocab.Values says, in place of its id, and
	// the metadata MetaFeatureValues. Optional; default ids.
	Vocab *Vocab
}

// Create starts writing path, a local path or a URI.
func Create(path string, opts WriterOptions) (*Writer, error) {
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	if opts.Shape != ShapeList && opts.Shape != ShapeLong && opts.Shape != ShapeAuto {
		return nil, fmt.Errorf("%s: writer shape %v, want list or long", path, opts.Shape)
	}
	md := opts.Metadata
	if opts.Vocab != nil {
		md = maps.Clone(md)
		if md == nil {
			md = map[string]string{}
		}
		md[MetaFeatureValues] = "names"
	}
	out, err := storage.Create(context.Background(), path)
	if err != nil {
		return nil, err
	}
	wopts := append([]parquet.WriterOption{
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(opts.RowGroupRows),
		parquet.CreatedBy("smoothanon", "", ""),
	}, metadataOptions(md)...)
	w := &Writer{path: path, out: out, long: opts.Shape == ShapeLong}
	w.add, w.sink = rowAdder(out, wopts, opts.Shape == ShapeLong, opts.Vocab)
	return w, nil
}

// rowAdder is the function that writes a user's rows in the schema of
// the shape and vocabulary, flushing its buffer when full, and that
// buffer.
func rowAdder(out io.Writer, wopts []parquet.WriterOption, long bool, v *Vocab) (func(string, []uint32) error, rowSink) {
	switch {
	case long && v != nil && v.Values() == ValuesStrings:
		b := newRowBuffer[stringPairRow](out, 8192, wopts)
		return func(u string, fs []uint32) error {
			for _, f := range fs {
				if err := b.put(stringPairRow{UserID: u, Feature: v.String(f)}); err != nil {
					return err
				}
			}
			return nil
		}, b
	case long:
		b := newRowBuffer[pairRow](out, 8192, wopts)
		return func(u string, fs []uint32) error {
			for _, f := range fs {
				x := int64(f)
				if v != nil {
					x = v.Int64(f)
				}
				if err := b.put(pairRow{UserID: u, Feature: x}); err != nil {
					return err
				}
			}
			return nil
		}, b
	case v != nil && v.Values() == ValuesStrings:
		b := newRowBuffer[stringsRow](out, 1024, wopts)
		return func(u string, fs []uint32) error {
			names := make([]string, len(fs))
			for i, f := range fs {
				names[i] = v.String(f)
			}
			return b.put(stringsRow{UserID: u, Features: names})
		}, b
	case v != nil:
		b := newRowBuffer[integersRow](out, 1024, wopts)
		return func(u string, fs []uint32) error {
			names := make([]int64, len(fs))
			for i, f := range fs {
				names[i] = v.Int64(f)
			}
			return b.put(integersRow{UserID: u, Features: names})
		}, b
	}
	b := newRowBuffer[parquetRow](out, 1024, wopts)
	return func(u string, fs []uint32) error {
		return b.put(parquetRow{UserID: u, Features: append([]uint32(nil), fs...)})
	}, b
}

// rowSink is a rowBuffer of any schema.
type rowSink interface {
	flush() error
	close() error
}

// rowBuffer buffers rows of one schema for its Parquet writer.
type rowBuffer[T any] struct {
	w   *parquet.GenericWriter[T]
	buf []T
}

func newRowBuffer[T any](out io.Writer, n int, opts []parquet.WriterOption) *rowBuffer[T] {
	return &rowBuffer[T]{w: parquet.NewGenericWriter[T](out, opts...), buf: make([]T, 0, n)}
}

// put buffers r, and writes the buffer out when it is full.
func (b *rowBuffer[T]) put(r T) error {
	b.buf = append(b.buf, r)
	if len(b.buf) == cap(b.buf) {
		return b.flush()
	}
	return nil
}

func (b *rowBuffer[T]) flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	clear(b.buf)
	b.buf = b.buf[:0]
	return err
}

func (b *rowBuffer[T]) close() error { return b.w.Close() }

// Write appends a user's row (in long form, a row per feature). features
// must be sorted and free of repeats; the slice may be reused by the
// caller after Write returns.
func (w *Writer) Write(user string, features []uint32) error {
	if w.err != nil {
		return w.err
	}
	w.rows++
	if w.long {
		w.fileRows += int64(len(features))
	} else {
		w.fileRows++
	}
	if err := w.add(user, features); err != nil {
		w.err = fmt.Errorf("%s: %w", w.path, err)
	}
	return w.err
}

func (w *Writer) flush() error {
	if err := w.sink.flush(); err != nil {
		w.err = fmt.Errorf("%s: %w", w.path, err)
	}
	return w.err
}

// Rows is the number of users written so far (in long form, those with
// features have rows in the file).
func (w *Writer) Rows() int64 { return w.rows }

// FileRows is the number of Parquet rows written so far: Rows in list
// form, the pairs in long form.
func (w *Writer) FileRows() int64 { return w.fileRows }

// Close finishes the file and publishes it under its final name.
func (w *Writer) Close() error { return w.Commit(storage.Cond{}) }

// Commit finishes the file and publishes it under its final name if c
// holds (storage.Writer.Commit); otherwise nothing appears and the error
// matches storage.ErrConflict.
func (w *Writer) Commit(c storage.Cond) error {
	if err := w.flush(); err != nil {
		w.Abort()
		return err
	}
	if err := w.sink.close(); err != nil {
		w.Abort()
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return w.out.Commit(c)
}

// CRC32C and Size describe the bytes of the file written so far; after
// Close they are the whole file's.
func (w *Writer) CRC32C() uint32 { return w.out.CRC32C() }
func (w *Writer) Size() int64    { return w.out.Size() }

// Abort discards what was written; the final path is never touched.
func (w *Writer) Abort() { w.out.Abort() }

// WriteMatrix writes m to path atomically.
func WriteMatrix(path string, m *Matrix, opts WriterOptions) error {
	w, err := Create(path, opts)
	if err != nil {
		return err
	}
	for i := range m.Users {
		if err := w.Write(m.Users[i], m.Row(i)); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}
