package importer

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/smoothanon/smoothanon/matrix"
)

// adultFields are the 15 fields of an adult.data record.
var adultFields = [15]string{
	"age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
	"occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
	"hours-per-week", "native-country", "income",
}

// adultCategorical are the indexes of the one-hot encoded fields, in feature
// id order.
var adultCategorical = []int{1, 3, 5, 6, 7, 8, 9, 13}

// adultLabel is the index of the income field: the label, not a feature.
const adultLabel = 14

// adultNumeric are the indexes of the fields that must be integers.
var adultNumeric = []int{0, 2, 4, 10, 11, 12}

// Adult reads UCI adult.data records from r (see the package doc).
func Adult(r io.Reader, name string, opts Options) (*matrix.Matrix, Stats, error) {
	st := Stats{Format: FormatAdult}
	attrs := make([]string, len(adultCategorical))
	for i, f := range adultCategorical {
		attrs[i] = adultFields[f]
	}
	enc := newOneHot(attrs)
	lr := newLineReader(r, name)
	var fields [][]byte
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			st.Skipped++
			continue
		}
		fields = splitComma(fields[:0], line)
		if len(fields) != len(adultFields) {
			return nil, st, lr.errorf("", "got %d comma-separated fields, want %d", len(fields), len(adultFields))
		}
		for _, f := range adultNumeric {
			if !isDigits(fields[f]) {
				return nil, st, lr.errorf(fieldName(f, adultFields[f]), "not a non-negative integer: %s", quote(fields[f]))
			}
		}
		for _, f := range adultCategorical {
			if len(fields[f]) == 0 {
				return nil, st, lr.errorf(fieldName(f, adultFields[f]), "empty value")
			}
		}
		for a, f := range adultCategorical {
			enc.value(a, fields[f])
		}
		enc.record(strconv.FormatInt(st.Records, 10))
		st.Labels = append(st.Labels, string(fields[adultLabel]))
		st.Records++
	}
	st.Lines = lr.line
	if err := lr.failure(); err != nil {
		return nil, st, err
	}
	m, names := enc.matrix()
	st.FeatureNames = names
	return finish(m, &st, name, opts, false)
}

// splitComma splits line on commas, trimming spaces and tabs around fields.
func splitComma(dst [][]byte, line []byte) [][]byte {
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return append(dst, bytes.Trim(line, " \t"))
		}
		dst = append(dst, bytes.Trim(line[:i], " \t"))
		line = line[i+1:]
	}
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fieldName names the 0-based field i for errors: "field 3 (fnlwgt)".
func fieldName(i int, name string) string {
	return fmt.Sprintf("field %d (%s)", i+1, name)
}
