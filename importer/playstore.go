package importer

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/smoothanon/smoothanon/matrix"
)

// playstoreHeader is the header of googleplaystore.csv.
var playstoreHeader = []string{
	"App", "Category", "Rating", "Reviews", "Size", "Installs", "Type", "Price",
	"Content Rating", "Genres", "Last Updated", "Current Ver", "Android Ver",
}

// playstoreAttrs are the encoded columns, in feature id order.
var playstoreAttrs = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12}

const (
	psApp        = 0
	psReviews    = 3
	psSize       = 4
	psAndroidVer = 12
)

// Playstore reads Kaggle googleplaystore.csv from r (see the package doc).
func Playstore(r io.Reader, name string, opts Options) (*matrix.Matrix, Stats, error) {
	st := Stats{Format: FormatPlaystore}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	errAt := func(line int64, field, format string, args ...any) error {
		return &Error{Path: name, Line: line, Field: field, Err: fmt.Errorf(format, args...)}
	}
	readErr := func(err error) error {
		var ie *Error
		if errors.As(err, &ie) {
			return ie
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return &Error{Path: name, Line: int64(pe.Line), Field: fmt.Sprintf("column %d", pe.Column), Err: pe.Err}
		}
		return &Error{Path: name, Err: err}
	}

	hdr, err := cr.Read()
	if err == io.EOF {
		return nil, st, &Error{Path: name, Err: errors.New("empty input: no header")}
	}
	if err != nil {
		return nil, st, readErr(err)
	}
	st.Lines++
	if len(hdr) > 0 {
		hdr[0] = strings.TrimPrefix(hdr[0], "\ufeff")
	}
	if len(hdr) != len(playstoreHeader) {
		return nil, st, errAt(1, "", "header has %d fields, want the %d of googleplaystore.csv", len(hdr), len(playstoreHeader))
	}
	for i, h := range hdr {
		if h != playstoreHeader[i] {
			return nil, st, errAt(1, fmt.Sprintf("field %d", i+1), "header is %s, want %q", quote(h), playstoreHeader[i])
		}
	}

	attrs := make([]string, len(playstoreAttrs))
	for i, c := range playstoreAttrs {
		attrs[i] = playstoreHeader[c]
	}
	enc := newOneHot(attrs)
	seen := make(map[string]bool)
	var label []byte
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, readErr(err)
		}
		st.Lines++
		line, _ := cr.FieldPos(0)
		st.Records++
		repaired := len(rec) == len(playstoreHeader)-1
		if repaired {
			// The Kaggle defect: Category is missing and the rest shifted left.
			rec = append(rec[:1], append([]string{""}, rec[1:]...)...)
			st.RepairedRows++
		}
		if len(rec) != len(playstoreHeader) {
			return nil, st, errAt(int64(line), "", "got %d fields, want %d", len(rec), len(playstoreHeader))
		}
		app := rec[psApp]
		if app == "" {
			return nil, st, errAt(int64(line), "field 1 (App)", "empty App name")
		}
		if rec[psAndroidVer] == "Varies with device" {
			st.DroppedVaries++
			continue
		}
		if seen[app] {
			st.DroppedDuplicates++
			continue
		}
		for a, c := range playstoreAttrs {
			v := rec[c]
			switch c {
			case psReviews:
				v, err = reviewsBin(v)
			case psSize:
				v, err = sizeBin(v)
			}
			if v == "" {
				v = "NaN"
			}
			if err != nil {
				src := c // the field's index in the input record
				if repaired {
					src--
				}
				fl, _ := cr.FieldPos(src)
				return nil, st, errAt(int64(fl), fmt.Sprintf("field %d (%s)", c+1, playstoreHeader[c]), "%v", err)
			}
			label = append(label[:0], v...)
			enc.value(a, label)
		}
		seen[app] = true
		enc.record(app)
	}
	m, names := enc.matrix()
	st.FeatureNames = names
	return finish(m, &st, name, opts, false)
}

// reviewsBin bins a review count by its number of decimal digits. The count
// is a non-negative integer, possibly written with a zero fraction ("19.0").
func reviewsBin(s string) (string, error) {
	intPart, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseUint(intPart, 10, 64)
	if err != nil || !isDigitsString(intPart) || strings.Trim(frac, "0") != "" {
		return "", fmt.Errorf("not a non-negative integer: %s", quote(s))
	}
	if n == 0 {
		return "0", nil
	}
	lo := uint64(1)
	for lo <= n/10 {
		lo *= 10
	}
	if lo >= 1e19/10 {
		return fmt.Sprintf("%d+", lo), nil
	}
	return fmt.Sprintf("%d-%d", lo, lo*10-1), nil
}

// sizeBin bins an app size ("19M", "8.7M", "201k") to whole megabytes.
func sizeBin(s string) (string, error) {
	if s == "Varies with device" {
		return s, nil
	}
	var div float64
	switch {
	case strings.HasSuffix(s, "M"):
		div = 1
	case strings.HasSuffix(s, "k"):
		div = 1024
	default:
		return "", fmt.Errorf("size %s is not \"<number>M\", \"<number>k\" or \"Varies with device\"", quote(s))
	}
	num := s[:len(s)-1]
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || f > 1e9 || math.IsNaN(f) || !isDecimal(num) {
		return "", fmt.Errorf("size %s: bad number", quote(s))
	}
	return fmt.Sprintf("%dM", int64(math.Floor(f/div))), nil
}

func isDigitsString(s string) bool { return isDigits([]byte(s)) }

// isDecimal accepts digits with at most one '.', as in "8.7".
func isDecimal(s string) bool {
	dot := false
	digits := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}
