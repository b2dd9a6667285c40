package matrix

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type longRow struct {
	UserID  string `parquet:"user_id"`
	Feature int64  `parquet:"feature"`
}

type namedLongRow struct {
	UID      string `parquet:"uid"`
	Interest uint32 `parquet:"interest"`
}

type nullableLongRow struct {
	UserID  string `parquet:"user_id"`
	Feature *int64 `parquet:"feature,optional"`
}

type namedListRow struct {
	UID       string   `parquet:"uid"`
	Interests []uint32 `parquet:"interests,list"`
}

// TestLongForm: the pairs of a long-form input, a user's rows spread over
// two files and repeated, read as the list-form file of the same rows.
func TestLongForm(t *testing.T) {
	dir := t.TempDir()
	writeRows(t, filepath.Join(dir, "a.parquet"), []longRow{{"u1", 7}, {"u2", 3}, {"u1", 2}, {"u1", 7}})
	writeRows(t, filepath.Join(dir, "b.parquet"), []longRow{{"u3", 9}, {"u2", 1}, {"u1", 5}})
	m, st, err := ReadMatrix(dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := New(0, 0)
	want.Append("u1", []uint32{2, 5, 7})
	want.Append("u2", []uint32{1, 3})
	want.Append("u3", []uint32{9})
	if !m.Equal(want) {
		t.Errorf("long form read as %+v, want %+v", m, want)
	}
	if st.Layout != (Layout{ShapeLong, ColUserID, ColFeature, ValuesIDs}) || st.Pairs != 7 || st.DroppedPairs != 1 {
		t.Errorf("stats %+v, want long (user_id, feature), 7 pairs, 1 dropped", st)
	}
	// The same rows in list form read alike.
	list := filepath.Join(t.TempDir(), "list.parquet")
	if err := WriteMatrix(list, want, WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	m2, st2, err := ReadMatrix(list, ReadOptions{})
	if err != nil || !m2.Equal(m) || st2.Layout != (Layout{ShapeList, ColUserID, ColFeatures, ValuesIDs}) {
		t.Errorf("list form: %+v %+v %v, want the long form's rows", m2, st2, err)
	}
}

// TestWriteLongForm: a Writer in long form writes a row per feature
// (user_id STRING, feature INT64, small row groups), its users without
// features have no row, and the file reads back as the same users.
func TestWriteLongForm(t *testing.T) {
	m := New(0, 0)
	m.Append("b", []uint32{1, 4, 1<<32 - 1})
	m.Append("a", nil)
	m.Append("c", []uint32{0})
	path := filepath.Join(t.TempDir(), "long.parquet")
	if err := WriteMatrix(path, m, WriterOptions{Shape: ShapeLong, RowGroupRows: 2}); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, groups := f.NumRows(), len(f.pf.RowGroups())
	kind := f.pf.Schema().Fields()[1].Type().Kind()
	f.Close()
	if rows != 4 || groups != 2 || kind != parquet.Int64 {
		t.Errorf("long file: %d rows in %d row groups, feature %v; want 4 in 2, INT64", rows, groups, kind)
	}
	got, st, err := ReadMatrix(path, ReadOptions{})
	want := New(0, 0)
	want.Append("b", m.Row(0))
	want.Append("c", m.Row(2))
	if err != nil || !got.Equal(want) || st.Layout.Shape != ShapeLong || st.Pairs != 4 {
		t.Errorf("read back %+v (%+v, %v), want %+v in long form, 4 pairs", got, st, err, want)
	}
	if _, err := Create(filepath.Join(t.TempDir(), "x"), WriterOptions{Shape: Shape(9)}); err == nil {
		t.Error("Create with shape 9 succeeded")
	}
}

// TestLayoutColumns: columns named by the layout, in both shapes.
func TestLayoutColumns(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.parquet")
	writeRows(t, long, []namedLongRow{{"a", 4}, {"b", 4}, {"a", 1}})
	list := filepath.Join(dir, "list.parquet")
	writeRows(t, list, []namedListRow{{"a", []uint32{4, 1}}, {"b", []uint32{4}}})
	for _, tc := range []struct {
		path  string
		l     Layout
		shape Shape
	}{
		{long, Layout{User: "uid", Feature: "interest"}, ShapeLong},
		{long, Layout{Shape: ShapeLong, User: "uid", Feature: "interest"}, ShapeLong},
		{list, Layout{User: "uid", Feature: "interests"}, ShapeList},
		{list, Layout{Shape: ShapeList, User: "uid", Feature: "interests"}, ShapeList},
	} {
		m, st, err := ReadMatrix(tc.path, ReadOptions{Layout: tc.l})
		if err != nil {
			t.Fatalf("%s %+v: %v", tc.path, tc.l, err)
		}
		if st.Layout.Shape != tc.shape || st.Layout.User != "uid" || st.Layout.Feature != tc.l.Feature {
			t.Errorf("%s: layout %v, want %v", tc.path, st.Layout, tc.shape)
		}
		if m.NumRows() != 2 || m.Users[0] != "a" || len(m.Row(0)) != 2 || m.Row(0)[0] != 1 || m.Row(1)[0] != 4 {
			t.Errorf("%s: rows %+v", tc.path, m)
		}
	}
}

// TestLayoutRefusals: every refusal names the file, the column and, for
// a value, the row.
func TestLayoutRefusals(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.parquet")
	writeRows(t, long, []longRow{{"a", 1}})
	list := filepath.Join(dir, "list.parquet")
	writeRows(t, list, []parquetRow{{"a", []uint32{1}}})
	null := filepath.Join(dir, "null.parquet")
	one := int64(1)
	writeRows(t, null, []nullableLongRow{{"a", &one}, {"b", nil}})
	named := filepath.Join(dir, "named.parquet")
	writeRows(t, named, []namedLongRow{{"a", 1}})
	mixed := t.TempDir()
	writeRows(t, filepath.Join(mixed, "1.parquet"), []longRow{{"a", 1}})
	writeRows(t, filepath.Join(mixed, "2.parquet"), []parquetRow{{"b", []uint32{1}}})
	for _, tc := range []struct {
		spec string
		l    Layout
		want string
		is   error
	}{
		{null, Layout{}, "null.parquet: row 1: column feature: null feature", nil},
		{list, Layout{Shape: ShapeLong}, "list.parquet: column feature: missing column (schema has user_id, features)", nil},
		{list, Layout{Shape: ShapeLong, Feature: "features"}, "list.parquet: column features: a list where a scalar was expected", nil},
		{long, Layout{Shape: ShapeList, Feature: "feature"}, "long.parquet: column feature: a scalar where a list was expected", nil},
		{long, Layout{Shape: ShapeList}, "long.parquet: column features: missing column (schema has user_id, feature)", nil},
		{named, Layout{}, "named.parquet: column user_id: missing column (schema has uid, interest)", nil},
		{named, Layout{User: "uid"}, "named.parquet: column feature: missing column (nor is there features) (schema has uid, interest)", nil},
		{named, Layout{User: "uid", Feature: "nope"}, "named.parquet: column nope: missing column", nil},
		{mixed, Layout{}, "2.parquet: column features: list form (user_id, features), but " + filepath.Join(mixed, "1.parquet") + " is long form (user_id, feature): files of mixed shapes in one input", ErrMixedShapes},
	} {
		_, _, err := ReadMatrix(tc.spec, ReadOptions{Layout: tc.l})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %+v: err = %v, want one line containing %q", filepath.Base(tc.spec), tc.l, err, tc.want)
		}
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %T is not a *FileError", tc.spec, err)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: err %v does not match %v", tc.spec, err, tc.is)
		}
	}
}

func TestParseShape(t *testing.T) {
	for _, s := range []string{"auto", "list", "long"} {
		sh, err := ParseShape(s)
		if err != nil || sh.String() != s {
			t.Errorf("ParseShape(%q) = %v, %v", s, sh, err)
		}
	}
	if _, err := ParseShape("wide"); err == nil {
		t.Error("ParseShape(wide) accepted")
	}
}
