package matrix_test

// Parquet written by other engines, each fixture written by that engine at
// test time: pyarrow (list and long form, its list and string variants,
// codecs, page versions, encodings), Spark (array<int> and array<bigint>,
// legacy format on and off) and the legacy list encodings parquet-go
// writes. Each file is read with the shared reader and compared row by row
// with the matrix its rows stand for.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/smoothanon/smoothanon/matrix"
)

// requirePython skips the test when python3 cannot import module, or
// under CI (CI set) fails it: CI installs module (.ci/run), so its absence
// there is a broken install, not a machine without the tool.
func requirePython(t *testing.T, module, install string) {
	t.Helper()
	if err := exec.Command("python3", "-c", "import "+module).Run(); err != nil {
		msg := fmt.Sprintf("%s cross-check skipped: python3 cannot import %s (%s, as .ci/run does)", module, module, install)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// runPython runs script with args and stdin, failing the test with its
// stderr on error; it returns stdout.
func runPython(t *testing.T, script string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("python3", append([]string{"-c", script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	return out
}

// engineRow is a row as the engines are given it: features unsorted,
// repeated, an empty list or a null one (feats nil and null set).
type engineRow struct {
	User  string   `json:"user"`
	Feats []*int64 `json:"feats"`
	Null  bool     `json:"-"`
}

func ints(xs ...int64) []*int64 {
	out := make([]*int64, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

// engineRows are the list-form rows every engine writes: empty and null
// lists first, middle and last, unsorted and repeated ids, 0 and 2^32−1,
// a non-ASCII and an empty user id, and enough rows (with a small row
// group size) for several row groups.
func engineRows() []engineRow {
	rows := []engineRow{
		{User: "empty-first", Feats: ints()},
		{User: "null-first", Null: true},
		{User: "a", Feats: ints(3, 1, 1, 2)},
		{User: "", Feats: ints(7)},
		{User: "ünïcødé ✓", Feats: ints(0, 1<<32-1, 1<<31)},
		{User: "null-middle", Null: true},
		{User: "empty-middle", Feats: ints()},
	}
	for i := 0; i < 300; i++ {
		var fs []int64
		for j := 0; j < i%7; j++ {
			fs = append(fs, int64((i*31+j*17)%1000))
		}
		rows = append(rows, engineRow{User: fmt.Sprintf("r%04d", i), Feats: ints(fs...)})
	}
	return append(rows, engineRow{User: "null-last", Null: true})
}

// listWant is the matrix list-form rows stand for.
func listWant(rows []engineRow) *matrix.Matrix {
	m := matrix.New(0, 0)
	for _, r := range rows {
		var fs []uint32
		for _, x := range r.Feats {
			fs = append(fs, uint32(*x))
		}
		slices.Sort(fs)
		m.Append(r.User, slices.Compact(fs))
	}
	return m
}

// longPairs are the long-form rows: one user's pairs spread over the file
// (and so over row groups), a repeated pair, 0 and 2^32−1.
func longPairs() [][2]any {
	var ps [][2]any
	for i := 0; i < 400; i++ {
		ps = append(ps, [2]any{fmt.Sprintf("u%02d", i%37), int64((i * 13) % 500)})
	}
	return append(ps, [2]any{"u00", int64(0)}, [2]any{"u00", int64(0)}, [2]any{"ünï", int64(1<<32 - 1)}, [2]any{"", int64(5)})
}

// longWant is the matrix long-form pairs stand for: users in the order of
// their first pairs, repeated pairs dropped.
func longWant(ps [][2]any) *matrix.Matrix {
	var order []string
	byUser := map[string][]uint32{}
	for _, p := range ps {
		u := p[0].(string)
		if _, ok := byUser[u]; !ok {
			order = append(order, u)
			byUser[u] = []uint32{}
		}
		byUser[u] = append(byUser[u], uint32(p[1].(int64)))
	}
	m := matrix.New(0, 0)
	for _, u := range order {
		fs := byUser[u]
		slices.Sort(fs)
		m.Append(u, slices.Compact(fs))
	}
	return m
}

// checkRead reads path (a file or directory) with the shared reader and
// compares it with want, row by row; it returns the number of row groups
// of the first file and its resolved layout.
func checkRead(t *testing.T, path string, want *matrix.Matrix) {
	t.Helper()
	got, st, err := matrix.ReadMatrix(path, matrix.ReadOptions{})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if !got.Equal(want) {
		for i := 0; i < min(got.NumRows(), want.NumRows()); i++ {
			if got.Users[i] != want.Users[i] || !slices.Equal(got.Row(i), want.Row(i)) {
				t.Fatalf("row %d: read %q %v, want %q %v", i, got.Users[i], got.Row(i), want.Users[i], want.Row(i))
			}
		}
		t.Fatalf("read %d rows, want %d", got.NumRows(), want.NumRows())
	}
	t.Logf("%s: %d rows, %d files", st.Layout, got.NumRows(), st.Files)
}

// parquetSchema is the schema of the Parquet file path, on one line.
func parquetSchema(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(pf.Schema().String()), " ")
}

// rowGroups is the number of row groups of the Parquet file path.
func rowGroups(t *testing.T, path string) int {
	t.Helper()
	pf, err := matrix.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	return pf.NumRowGroups()
}

// pyarrowScript writes each table of a JSON list of specs on stdin to
// spec["path"] with pyarrow.parquet.write_table(**spec["write"]) and
// prints each file's Parquet schema; one process writes all, as starting
// Python and importing pyarrow costs more than a fixture. spec: user_type (string, large_string,
// dictionary), feat_type (a pyarrow type factory: int32, int64, uint32,
// date32, ...), list (list, large_list, or none: long form), elem_nullable,
// users, feats (lists, or null; scalars in long form).
const pyarrowScript = `
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
for spec in json.load(sys.stdin):
    users = pa.array(spec["users"], pa.string())
    if spec["user_type"] == "dictionary":
        users = users.dictionary_encode()
    else:
        users = users.cast(getattr(pa, spec["user_type"])())
    ft = getattr(pa, spec["feat_type"])(*spec.get("feat_args", []))
    if spec["list"] == "none":
        name, feats = "feature", pa.array(spec["feats"], ft)
    else:
        make = pa.large_list if spec["list"] == "large_list" else pa.list_
        name = "features"
        feats = pa.array(spec["feats"], make(pa.field("element", ft, nullable=spec["elem_nullable"])))
    pq.write_table(pa.table({"user_id": users, name: feats}), spec["path"], **spec["write"])
    print(spec["path"], pq.ParquetFile(spec["path"]).schema, sep="\n")
`

type pyarrowSpec struct {
	UserType     string         `json:"user_type"`
	FeatType     string         `json:"feat_type"`
	FeatArgs     []any          `json:"feat_args,omitempty"`
	List         string         `json:"list"`
	ElemNullable bool           `json:"elem_nullable"`
	Users        []string       `json:"users"`
	Feats        []any          `json:"feats"`
	Write        map[string]any `json:"write"`
	Path         string         `json:"path"`
}

// writePyarrow writes every spec of specs with pyarrow, each to a fresh
// file, and returns their paths by name; the files' schemas go to the
// test log.
func writePyarrow(t *testing.T, specs map[string]pyarrowSpec) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	var list []pyarrowSpec
	for name, spec := range specs {
		if spec.Write == nil {
			spec.Write = map[string]any{}
		}
		spec.Path = filepath.Join(dir, fmt.Sprintf("f%03d.parquet", len(list)))
		paths[name] = spec.Path
		list = append(list, spec)
	}
	in, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pyarrow schemas:\n%s", runPython(t, pyarrowScript, in))
	return paths
}

// fit lowers the ids of rows that do not fit a signed 32-bit column to
// 2^31−1, for the int32 fixtures.
func fit(rows []engineRow, ft string) []engineRow {
	if ft != "int32" {
		return rows
	}
	out := make([]engineRow, len(rows))
	for i, r := range rows {
		out[i] = r
		if r.Feats != nil {
			out[i].Feats = make([]*int64, len(r.Feats))
			for j, x := range r.Feats {
				out[i].Feats[j] = ints(min(*x, 1<<31-1))[0]
			}
		}
	}
	return out
}

// fitPairs is fit for long-form pairs.
func fitPairs(ps [][2]any, ft string) [][2]any {
	if ft != "int32" {
		return ps
	}
	out := make([][2]any, len(ps))
	for i, p := range ps {
		out[i] = [2]any{p[0], min(p[1].(int64), 1<<31-1)}
	}
	return out
}

// listSpec is spec with the list-form rows rows.
func listSpec(spec pyarrowSpec, rows []engineRow) pyarrowSpec {
	for _, r := range rows {
		spec.Users = append(spec.Users, r.User)
		if r.Null {
			spec.Feats = append(spec.Feats, nil)
		} else {
			spec.Feats = append(spec.Feats, r.Feats)
		}
	}
	return spec
}

// longSpec is spec with the long-form pairs ps.
func longSpec(spec pyarrowSpec, ps [][2]any) pyarrowSpec {
	spec.List = "none"
	for _, p := range ps {
		spec.Users = append(spec.Users, p[0].(string))
		spec.Feats = append(spec.Feats, p[1])
	}
	return spec
}

// TestInteropPyarrowWrites reads files pyarrow writes, in list and long
// form, with every list, string and integer variant it has and the
// writer options that change the bytes on disk.
func TestInteropPyarrowWrites(t *testing.T) {
	requirePython(t, "pyarrow", "pip install pyarrow==26.0.1")
	small := map[string]any{"row_group_size": 64}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"row_group_size": 64}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	lists := []struct {
		name string
		spec pyarrowSpec
	}{
		{"default/list<int64>", pyarrowSpec{UserType: "string", FeatType: "int64", List: "list", ElemNullable: true, Write: small}},
		{"list<int32>", pyarrowSpec{UserType: "string", FeatType: "int32", List: "list", ElemNullable: true, Write: small}},
		{"list<uint32>", pyarrowSpec{UserType: "string", FeatType: "uint32", List: "list", ElemNullable: true, Write: small}},
		{"list<uint32>/version1.0", pyarrowSpec{UserType: "string", FeatType: "uint32", List: "list", ElemNullable: true, Write: with("version", "1.0")}},
		{"list<uint64>", pyarrowSpec{UserType: "string", FeatType: "uint64", List: "list", ElemNullable: true, Write: small}},
		{"list<not null int64>", pyarrowSpec{UserType: "string", FeatType: "int64", List: "list", ElemNullable: false, Write: small}},
		{"non-compliant/item", pyarrowSpec{UserType: "string", FeatType: "int64", List: "list", ElemNullable: true, Write: with("use_compliant_nested_type", false)}},
		{"non-compliant/not null int32", pyarrowSpec{UserType: "string", FeatType: "int32", List: "list", ElemNullable: false, Write: with("use_compliant_nested_type", false)}},
		{"large_list<int64>", pyarrowSpec{UserType: "string", FeatType: "int64", List: "large_list", ElemNullable: true, Write: small}},
		{"large_list<uint32>/large_string", pyarrowSpec{UserType: "large_string", FeatType: "uint32", List: "large_list", ElemNullable: false, Write: small}},
		{"large_string", pyarrowSpec{UserType: "large_string", FeatType: "int64", List: "list", ElemNullable: true, Write: small}},
		{"dictionary user ids", pyarrowSpec{UserType: "dictionary", FeatType: "int64", List: "list", ElemNullable: true, Write: small}},
		{"no dictionary pages", pyarrowSpec{UserType: "string", FeatType: "int64", List: "list", ElemNullable: true, Write: with("use_dictionary", false)}},
		{"data page v2", pyarrowSpec{UserType: "dictionary", FeatType: "int32", List: "list", ElemNullable: true, Write: with("data_page_version", "2.0")}},
		{"small pages", pyarrowSpec{UserType: "string", FeatType: "int64", List: "list", ElemNullable: true, Write: with("data_page_size", 64, "write_batch_size", 8)}},
		{"delta encodings", pyarrowSpec{UserType: "string", FeatType: "int64", List: "list", ElemNullable: true, Write: with("use_dictionary", false,
			"column_encoding", map[string]string{"user_id": "DELTA_BYTE_ARRAY", "features.list.element": "DELTA_BINARY_PACKED"})}},
		{"one row group", pyarrowSpec{UserType: "string", FeatType: "int64", List: "list", ElemNullable: true}},
	}
	for _, codec := range []string{"none", "snappy", "gzip", "brotli", "lz4", "zstd"} {
		lists = append(lists, struct {
			name string
			spec pyarrowSpec
		}{"codec/" + codec, pyarrowSpec{UserType: "string", FeatType: "int32", List: "list", ElemNullable: true, Write: with("compression", codec)}})
	}
	type longCase struct {
		name string
		spec pyarrowSpec
	}
	longs := []longCase{
		{"int64", pyarrowSpec{UserType: "string", FeatType: "int64", Write: small}},
		{"int32", pyarrowSpec{UserType: "string", FeatType: "int32", Write: small}},
		{"uint32", pyarrowSpec{UserType: "string", FeatType: "uint32", Write: small}},
		{"uint32/version1.0", pyarrowSpec{UserType: "string", FeatType: "uint32", Write: with("version", "1.0")}},
		{"large_string", pyarrowSpec{UserType: "large_string", FeatType: "int64", Write: small}},
		{"dictionary user ids", pyarrowSpec{UserType: "dictionary", FeatType: "uint32", Write: with("data_page_version", "2.0")}},
		{"one row group", pyarrowSpec{UserType: "string", FeatType: "int64"}},
	}
	specs := map[string]pyarrowSpec{}
	for _, c := range lists {
		specs["list/"+c.name] = listSpec(c.spec, fit(engineRows(), c.spec.FeatType))
	}
	for _, c := range longs {
		specs["long/"+c.name] = longSpec(c.spec, fitPairs(longPairs(), c.spec.FeatType))
	}
	paths := writePyarrow(t, specs)
	for _, c := range lists {
		t.Run("list/"+c.name, func(t *testing.T) {
			path := paths["list/"+c.name]
			if g := rowGroups(t, path); (c.spec.Write["row_group_size"] != nil) != (g > 1) {
				t.Errorf("%d row groups", g)
			}
			checkRead(t, path, listWant(fit(engineRows(), c.spec.FeatType)))
		})
	}
	for _, c := range longs {
		t.Run("long/"+c.name, func(t *testing.T) {
			path := paths["long/"+c.name]
			checkRead(t, path, longWant(fitPairs(longPairs(), c.spec.FeatType)))
		})
	}
}

// TestInteropPyarrowRefusals checks the one-line refusals of what
// pyarrow can write but the reader does not take: ids outside [0, 2^32),
// null elements and features, and integer columns that are not integers
// (dates, timestamps).
func TestInteropPyarrowRefusals(t *testing.T) {
	requirePython(t, "pyarrow", "pip install pyarrow==26.0.1")
	list := func(ft string, feats ...any) pyarrowSpec {
		s := pyarrowSpec{UserType: "string", FeatType: ft, List: "list", ElemNullable: true}
		for i, f := range feats {
			s.Users = append(s.Users, fmt.Sprintf("u%d", i))
			s.Feats = append(s.Feats, f)
		}
		return s
	}
	long := func(ft string, feats ...any) pyarrowSpec {
		s := list(ft, feats...)
		s.List = "none"
		return s
	}
	cases := []struct {
		name string
		spec pyarrowSpec
		want string // the message after the path
	}{
		{"list/int64 2^32", list("int64", ints(1), ints(1<<32-1), ints(2, 1<<32)), ": row 2: column features: feature id 4294967296 out of range [0, 2^32)"},
		{"list/int32 negative", list("int32", ints(1), ints(5, -1)), ": row 1: column features: feature id -1 out of range [0, 2^32)"},
		{"list/uint64 2^63", list("uint64", ints(1), []any{uint64(1 << 63)}), ": row 1: column features: feature id 9223372036854775808 out of range [0, 2^32)"},
		{"list/null element", list("int64", ints(1), []*int64{nil}), ": row 1: column features: null feature id"},
		{"long/int64 2^32", long("int64", int64(1<<32-1), int64(1<<32)), ": row 1: column feature: feature id 4294967296 out of range [0, 2^32)"},
		{"long/negative", long("int64", int64(3), int64(-5)), ": row 1: column feature: feature id -5 out of range [0, 2^32)"},
		{"long/null feature", long("int64", int64(3), nil), ": row 1: column feature: null feature"},
		{"list/date32", list("date32", ints(1)), ": column features: wrong element type INT32 (DATE), want an integer"},
		{"long/timestamp", func() pyarrowSpec { s := long("timestamp", int64(1)); s.FeatArgs = []any{"ms"}; return s }(), ": column feature: wrong feature type INT64 (TIMESTAMP"},
	}
	specs := map[string]pyarrowSpec{}
	for _, c := range cases {
		specs[c.name] = c.spec
	}
	paths := writePyarrow(t, specs)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := paths[c.name]
			_, _, err := matrix.ReadMatrix(path, matrix.ReadOptions{})
			if err == nil || !strings.HasPrefix(err.Error(), path+c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line %s%s", err, path, c.want)
			}
		})
	}
}

// sparkScript writes, in one local Spark session, each job of a JSON
// list on stdin: the rows (user_id, features) or (user_id, feature) with
// the Spark SQL type feat_type (int or bigint), as Spark's DataFrame
// writer writes Parquet with spark.sql.parquet.writeLegacyFormat set to
// legacy, into the directory path, from 3 partitions (3 part files). It
// prints each directory's Parquet schema as Spark's reader of the part
// files states it.
const sparkScript = `
import json, sys
from pyspark.sql import SparkSession
from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType
spark = (SparkSession.builder.master("local[1]").appName("smoothanon-interop")
         .config("spark.driver.memory", "512m").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.hadoop.parquet.block.size", "2048")
         .config("spark.hadoop.parquet.page.size.row.check.min", "10")
         .getOrCreate())
for job in json.load(sys.stdin):
    ft = {"int": IntegerType(), "bigint": LongType()}[job["feat_type"]]
    if job["long"]:
        schema = StructType([StructField("user_id", StringType()), StructField("feature", ft)])
    else:
        schema = StructType([StructField("user_id", StringType()), StructField("features", ArrayType(ft, job["contains_null"]))])
    spark.conf.set("spark.sql.parquet.writeLegacyFormat", str(job["legacy"]).lower())
    rdd = spark.sparkContext.parallelize([tuple(r) for r in job["rows"]], 3)
    spark.createDataFrame(rdd, schema).write.parquet(job["path"])
spark.stop()
`

type sparkJob struct {
	FeatType     string  `json:"feat_type"`
	Long         bool    `json:"long"`
	ContainsNull bool    `json:"contains_null"`
	Legacy       bool    `json:"legacy"`
	Rows         [][]any `json:"rows"`
	Path         string  `json:"path"`
}

// TestInteropSparkWrites reads the directories Spark's DataFrame writer
// makes (part files, _SUCCESS, .crc files) of array<int> and
// array<bigint> features, with containsNull true and false, with
// writeLegacyFormat false (the standard three-level list) and true
// (Spark's legacy "bag"/"array" names), and the long form.
func TestInteropSparkWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("Spark cross-check skipped under -short: it starts a JVM")
	}
	requirePython(t, "pyspark", "pip install pyspark==3.5.8")
	if _, err := exec.LookPath("java"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Spark cross-check: no java on PATH")
		}
		t.Skip("Spark cross-check skipped: no java on PATH")
	}
	dir := t.TempDir()
	type sparkCase struct {
		name string
		job  sparkJob
		want *matrix.Matrix
	}
	var cases []sparkCase
	for _, ft := range []string{"int", "bigint"} {
		rows := engineRows()
		if ft == "int" {
			rows = fit(rows, "int32")
		}
		var lrows [][]any
		for _, r := range rows {
			if r.Null {
				lrows = append(lrows, []any{r.User, nil})
			} else {
				lrows = append(lrows, []any{r.User, r.Feats})
			}
		}
		for _, legacy := range []bool{false, true} {
			for _, cn := range []bool{true, false} {
				cases = append(cases, sparkCase{fmt.Sprintf("list/array<%s>/containsNull=%v/legacy=%v", ft, cn, legacy),
					sparkJob{FeatType: ft, ContainsNull: cn, Legacy: legacy, Rows: lrows}, listWant(rows)})
			}
		}
		pairs := longPairs()
		if ft == "int" {
			pairs = fitPairs(pairs, "int32")
		}
		var prows [][]any
		for _, p := range pairs {
			prows = append(prows, []any{p[0], p[1]})
		}
		cases = append(cases, sparkCase{fmt.Sprintf("long/%s", ft),
			sparkJob{FeatType: ft, Long: true, Rows: prows}, longWant(pairs)})
	}
	var jobs []sparkJob
	for i := range cases {
		cases[i].job.Path = filepath.Join(dir, fmt.Sprintf("j%02d", i))
		jobs = append(jobs, cases[i].job)
	}
	in, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	runPython(t, sparkScript, in)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parts, err := filepath.Glob(filepath.Join(c.job.Path, "part-*.parquet"))
			if err != nil || len(parts) != 3 {
				t.Fatalf("part files %v (%v), want 3", parts, err)
			}
			schema := parquetSchema(t, parts[0])
			t.Logf("%s: %d row groups, schema %s", filepath.Base(parts[0]), rowGroups(t, parts[0]), schema)
			// Spark's legacy format writes an array without nulls in the
			// spec's two-level list encoding, the element the repeated field.
			if c.job.Legacy && !c.job.ContainsNull && !strings.Contains(schema, "repeated int") {
				t.Errorf("legacy containsNull=false: schema %s, want the two-level encoding", schema)
			}
			checkRead(t, c.job.Path, c.want)
		})
	}
}

// twoLevel is the spec's legacy two-level list: a LIST-annotated group
// whose one field is the repeated element itself,
//
//	optional group features (LIST) { repeated int64 array; }
type twoLevel struct{ parquet.Group }

func (twoLevel) Type() parquet.Type { return parquet.List(parquet.Int(64)).Type() }

// TestInteropParquetGoLegacyLists reads the legacy list encodings
// parquet-go writes: a bare repeated field (a []int64 without the list
// tag: repeated int64 features, no LIST group) and the two-level LIST
// group, with empty lists, across several row groups.
func TestInteropParquetGoLegacyLists(t *testing.T) {
	rows := engineRows()
	want := listWant(rows)
	// A bare repeated field cannot tell a null list from an empty one: both
	// are empty rows, as the reader reads them.
	t.Run("bare repeated", func(t *testing.T) {
		type row struct {
			UserID   string  `parquet:"user_id"`
			Features []int64 `parquet:"features"`
		}
		path := filepath.Join(t.TempDir(), "bare.parquet")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[row](f, parquet.MaxRowsPerRowGroup(50))
		for _, r := range rows {
			var fs []int64
			for _, x := range r.Feats {
				fs = append(fs, *x)
			}
			if _, err := w.Write([]row{{r.User, fs}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if s := parquetSchema(t, path); !strings.Contains(s, "repeated int64 features") {
			t.Fatalf("schema %s", s)
		}
		if g := rowGroups(t, path); g < 2 {
			t.Errorf("%d row groups", g)
		}
		checkRead(t, path, want)
	})
	t.Run("two-level LIST", func(t *testing.T) {
		schema := parquet.NewSchema("row", parquet.Group{
			"user_id":  parquet.String(),
			"features": parquet.Optional(twoLevel{parquet.Group{"array": parquet.Repeated(parquet.Int(64))}}),
		})
		path := filepath.Join(t.TempDir(), "twolevel.parquet")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewWriter(f, schema, parquet.MaxRowsPerRowGroup(50))
		// Leaf columns in schema order: features.array (0), user_id (1).
		// Definition levels of features.array: 0 null list, 1 empty, 2 an id.
		for _, r := range rows {
			var row parquet.Row
			switch {
			case r.Null:
				row = append(row, parquet.Value{}.Level(0, 0, 0))
			case len(r.Feats) == 0:
				row = append(row, parquet.Value{}.Level(0, 1, 0))
			}
			for i, x := range r.Feats {
				row = append(row, parquet.Int64Value(*x).Level(min(i, 1), 2, 0))
			}
			row = append(row, parquet.ByteArrayValue([]byte(r.User)).Level(0, 0, 1))
			if _, err := w.WriteRows([]parquet.Row{row}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if s := parquetSchema(t, path); !strings.Contains(s, "optional group features (LIST) { repeated int64 array") {
			t.Fatalf("schema %s", s)
		}
		checkRead(t, path, want)
	})
}
