package matrix

import (
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// Shape is how an input lays out a user's features.
type Shape int

const (
	// ShapeAuto takes the shape from each file's schema (see Layout).
	ShapeAuto Shape = iota
	// ShapeList is one row per user: a user column and a list column of
	// the user's features.
	ShapeList
	// ShapeLong is one row per (user, feature) pair: a user column and a
	// scalar feature column. The rows of one user may lie in any files and
	// row groups; a user without features cannot be written this way, so
	// such users are absent from a long-form input and from its release.
	ShapeLong
)

// ColFeature is the feature column of a long-form input by default.
const ColFeature = "feature"

func (s Shape) String() string {
	switch s {
	case ShapeList:
		return "list"
	case ShapeLong:
		return "long"
	}
	return "auto"
}

// ParseShape parses the --input_shape flag: auto, list or long.
func ParseShape(s string) (Shape, error) {
	switch s {
	case "", "auto":
		return ShapeAuto, nil
	case "list":
		return ShapeList, nil
	case "long":
		return ShapeLong, nil
	}
	return 0, fmt.Errorf("invalid input shape %q (want auto, list or long)", s)
}

// Layout names an input's shape and its two columns. The zero Layout is
// the default: the shape from the schema, the user ids in ColUserID, the
// features in ColFeatures (list form) or else ColFeature (long form).
type Layout struct {
	// Shape is the input's shape. Optional; default ShapeAuto: a file whose
	// feature column is a list is list form, one whose feature column is a
	// scalar is long form.
	Shape Shape
	// User is the user id column, a string. Optional; default ColUserID.
	User string
	// Feature is the feature column. Optional; default ColFeatures when
	// the file has it (or Shape is ShapeList), else ColFeature.
	Feature string
	// Values is what the feature values are. Optional; default
	// ValuesAuto: a string column holds names, an integer column ids.
	// Resolved, it is ValuesIDs, ValuesStrings or ValuesIntegers.
	Values Values
}

// String describes a resolved layout for reports and dry runs:
// "list (user_id, features)", or with named features "long (user_id,
// interest) of string names".
func (l Layout) String() string {
	s := fmt.Sprintf("%s (%s, %s)", l.Shape, l.User, l.Feature)
	if l.Values.Named() {
		s += " of " + l.Values.String()
	}
	return s
}

// ErrMixedShapes marks an input whose files do not share one shape and
// pair of columns.
var ErrMixedShapes = errors.New("files of mixed shapes in one input")

// Agree checks that the file at path, whose resolved layout is got, has
// the layout of the input's first file, firstPath (resolved as want).
// A difference is a *FileError naming path, the column and both layouts,
// matching ErrMixedShapes.
func Agree(path string, got Layout, firstPath string, want Layout) error {
	if got == want {
		return nil
	}
	col := got.Feature
	if got.User != want.User {
		col = got.User
	}
	return &FileError{Path: path, Row: -1, Column: col, Err: &refusal{ErrMixedShapes,
		fmt.Sprintf("%s, but %s is %s: %s", formOf(got), firstPath, formOf(want), ErrMixedShapes)}}
}

// formOf describes l as "long form (user_id, feature)", with " of string
// names" or " of integer names" when its features are names.
func formOf(l Layout) string {
	s := fmt.Sprintf("%s form (%s, %s)", l.Shape, l.User, l.Feature)
	if l.Values.Named() {
		s += " of " + l.Values.String()
	}
	return s
}

// resolveLayout finds the columns l names in pf's schema and resolves
// ShapeAuto, or says which column is missing or of the wrong kind.
func (pf *File) resolveLayout(l Layout) (user, feats *parquet.Column, err error) {
	if l.User == "" {
		l.User = ColUserID
	}
	root := pf.pf.Root()
	find := func(name string) *parquet.Column {
		for _, c := range root.Columns() {
			if c.Name() == name {
				return c
			}
		}
		return nil
	}
	if user = find(l.User); user == nil {
		return nil, nil, pf.schemaErr(l.User, "missing column (schema has %s)", columnNames(root))
	}
	if l.Feature == "" {
		switch {
		case l.Shape == ShapeList || (l.Shape == ShapeAuto && find(ColFeatures) != nil):
			l.Feature = ColFeatures
		default:
			l.Feature = ColFeature
		}
	}
	if feats = find(l.Feature); feats == nil {
		what := "missing column"
		if l.Shape == ShapeAuto && l.Feature == ColFeature {
			what = "missing column (nor is there " + ColFeatures + ")"
		}
		return nil, nil, pf.schemaErr(l.Feature, "%s (schema has %s)", what, columnNames(root))
	}
	depth := 0
	for c := feats; ; c = c.Columns()[0] {
		if c.Repeated() {
			depth++
		}
		if c.Leaf() || len(c.Columns()) != 1 {
			break
		}
	}
	shape := ShapeLong
	if depth > 0 || !feats.Leaf() {
		shape = ShapeList
	}
	switch {
	case l.Shape == ShapeLong && shape == ShapeList:
		return nil, nil, pf.schemaErr(l.Feature, "a list where a scalar was expected (long form: one feature per row)")
	case l.Shape == ShapeList && shape == ShapeLong:
		return nil, nil, pf.schemaErr(l.Feature, "a scalar where a list was expected (list form: one list per row)")
	}
	l.Shape = shape
	pf.layout = l
	return user, feats, nil
}

// Layout is the file's resolved layout: its shape and its two columns.
func (pf *File) Layout() Layout { return pf.layout }
