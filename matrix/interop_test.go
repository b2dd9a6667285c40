package matrix_test

// Cross-implementation checks: files written by matrix.WriteMatrix (via
// parquet-go) must read back identically with Apache Arrow's Parquet
// implementation and, when the Python package duckdb is installed, with
// DuckDB.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/smoothanon/smoothanon/matrix"
)

// interopMatrix has the awkward cases: empty rows (first, middle, last),
// feature ids 0 and 2^32−1, non-ASCII and empty user ids, a long row, and
// enough rows to span several row groups.
func interopMatrix() *matrix.Matrix {
	m := matrix.New(0, 0)
	m.Append("empty-first", nil)
	m.Append("", []uint32{7})
	m.Append("ünïcødé ✓", []uint32{0, 1<<32 - 1, 1 << 31})
	long := make([]uint32, 5000)
	for i := range long {
		long[i] = uint32(i * 3)
	}
	m.Append("long", long)
	m.Append("empty-middle", []uint32{})
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 500; i++ {
		var fs []uint32
		for j := r.IntN(12); j > 0; j-- {
			fs = append(fs, r.Uint32N(1000))
		}
		m.Append(fmt.Sprintf("r%04d", i), fs)
	}
	m.Append("empty-last", nil)
	return m
}

func writeInterop(t *testing.T) (string, *matrix.Matrix) {
	t.Helper()
	m := interopMatrix()
	path := filepath.Join(t.TempDir(), "interop.parquet")
	if err := matrix.WriteMatrix(path, m, matrix.WriterOptions{RowGroupRows: 128}); err != nil {
		t.Fatal(err)
	}
	return path, m
}

func TestInteropArrow(t *testing.T) {
	path, want := writeInterop(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatalf("arrow cannot open the file: %v", err)
	}
	defer pr.Close()
	if pr.NumRowGroups() < 2 {
		t.Errorf("%d row groups, want several", pr.NumRowGroups())
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 100}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("arrow cannot read the file: %v", err)
	}
	defer tbl.Release()

	sc := tbl.Schema()
	if sc.NumFields() != 2 || sc.Field(0).Name != matrix.ColUserID || sc.Field(1).Name != matrix.ColFeatures {
		t.Fatalf("schema %v", sc)
	}
	if !arrow.TypeEqual(sc.Field(0).Type, arrow.BinaryTypes.String) || sc.Field(0).Nullable {
		t.Errorf("user_id type %v nullable %v, want non-null utf8", sc.Field(0).Type, sc.Field(0).Nullable)
	}
	lt, ok := sc.Field(1).Type.(*arrow.ListType)
	if !ok || lt.Elem().ID() != arrow.UINT32 {
		t.Fatalf("features type %v, want list<uint32>", sc.Field(1).Type)
	}

	got := matrix.New(0, 0)
	var emptyNull, emptyList int
	users := tbl.Column(0).Data().Chunks()
	feats := tbl.Column(1).Data().Chunks()
	if len(users) != len(feats) {
		t.Fatalf("%d user chunks, %d feature chunks", len(users), len(feats))
	}
	for c := range users {
		us := users[c].(*array.String)
		ls := feats[c].(*array.List)
		vals := ls.ListValues().(*array.Uint32)
		for i := 0; i < us.Len(); i++ {
			if us.IsNull(i) {
				t.Fatalf("null user id at chunk %d row %d", c, i)
			}
			var row []uint32
			if ls.IsNull(i) {
				emptyNull++
			} else {
				lo, hi := ls.ValueOffsets(i)
				if lo == hi {
					emptyList++
				}
				for j := lo; j < hi; j++ {
					row = append(row, vals.Value(int(j)))
				}
			}
			if !slices.IsSorted(row) {
				t.Errorf("row %q not sorted: %v", us.Value(i), row)
			}
			got.Append(us.Value(i), row)
		}
	}
	if !got.Equal(want) {
		for i := 0; i < min(got.NumRows(), want.NumRows()); i++ {
			if got.Users[i] != want.Users[i] || !slices.Equal(got.Row(i), want.Row(i)) {
				t.Fatalf("row %d: arrow read %q %v, want %q %v", i, got.Users[i], got.Row(i), want.Users[i], want.Row(i))
			}
		}
		t.Fatalf("arrow read %d rows, want %d", got.NumRows(), want.NumRows())
	}
	t.Logf("arrow: %d rows in %d row groups; empty rows: %d null lists, %d empty lists", got.NumRows(), pr.NumRowGroups(), emptyNull, emptyList)
}

// duckdbScript prints the file's rows as JSON lines [user_id, features],
// with a null list printed as null.
const duckdbScript = `
import duckdb, json, sys
con = duckdb.connect()
types = [r[1] for r in con.execute("DESCRIBE SELECT user_id, features FROM read_parquet(?)", [sys.argv[1]]).fetchall()]
print(json.dumps(types))
for user, feats in con.execute("SELECT user_id, features FROM read_parquet(?)", [sys.argv[1]]).fetchall():
    print(json.dumps([user, feats], ensure_ascii=False))
`

func TestInteropDuckDB(t *testing.T) {
	if err := exec.Command("python3", "-c", "import duckdb").Run(); err != nil {
		t.Skip("DuckDB cross-check skipped: python3 with the duckdb package is not available (pip install duckdb==1.5.6)")
	}
	path, want := writeInterop(t)
	var stderr bytes.Buffer
	cmd := exec.Command("python3", "-c", duckdbScript, path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, stderr.String())
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var types []string
	if err := json.Unmarshal(lines[0], &types); err != nil {
		t.Fatalf("duckdb types %q: %v", lines[0], err)
	}
	if !slices.Equal(types, []string{"VARCHAR", "UINTEGER[]"}) {
		t.Errorf("duckdb column types %v, want [VARCHAR UINTEGER[]]", types)
	}
	got := matrix.New(0, 0)
	for _, line := range lines[1:] {
		var rec [2]json.RawMessage
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("duckdb row %q: %v", line, err)
		}
		var user string
		var feats []uint32
		if err := json.Unmarshal(rec[0], &user); err != nil {
			t.Fatalf("duckdb user %q: %v", rec[0], err)
		}
		if err := json.Unmarshal(rec[1], &feats); err != nil { // null -> nil
			t.Fatalf("duckdb features %q: %v", rec[1], err)
		}
		got.Append(user, feats)
	}
	if !got.Equal(want) {
		for i := 0; i < min(got.NumRows(), want.NumRows()); i++ {
			if got.Users[i] != want.Users[i] || !slices.Equal(got.Row(i), want.Row(i)) {
				t.Fatalf("row %d: duckdb read %q %v, want %q %v", i, got.Users[i], got.Row(i), want.Users[i], want.Row(i))
			}
		}
		t.Fatalf("duckdb read %d rows, want %d", got.NumRows(), want.NumRows())
	}
}

// arrowRow is a row as another tool may write it: features unsorted,
// repeated, or a null list.
type arrowRow struct {
	user  string
	feats []int64
	null  bool
}

var foreignRows = []arrowRow{
	{user: "a", feats: []int64{3, 1, 1, 2}},
	{user: "b", null: true},
	{user: "c", feats: []int64{}},
	{user: "d", feats: []int64{0, 1<<32 - 1}},
}

// foreignWant is what matrix must read from foreignRows (repeated on n
// consecutive blocks of rows with distinct ids).
func foreignWant(n int) *matrix.Matrix {
	m := matrix.New(0, 0)
	for b := 0; b < n; b++ {
		for _, r := range foreignRows {
			fs := make([]uint32, 0, len(r.feats))
			for _, x := range r.feats {
				fs = append(fs, uint32(x))
			}
			m.Append(fmt.Sprintf("%s%03d", r.user, b), fs)
		}
	}
	return m
}

// TestInteropArrowWrites reads files written by Arrow, with list<uint32>
// and (as Spark writes) list<int64> features, across several row groups.
func TestInteropArrowWrites(t *testing.T) {
	const blocks = 60
	for _, elem := range []arrow.DataType{arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int64} {
		t.Run(elem.String(), func(t *testing.T) {
			mem := memory.NewGoAllocator()
			schema := arrow.NewSchema([]arrow.Field{
				{Name: matrix.ColUserID, Type: arrow.BinaryTypes.String},
				{Name: matrix.ColFeatures, Type: arrow.ListOf(elem), Nullable: true},
			}, nil)
			rb := array.NewRecordBuilder(mem, schema)
			defer rb.Release()
			ub := rb.Field(0).(*array.StringBuilder)
			lb := rb.Field(1).(*array.ListBuilder)
			for b := 0; b < blocks; b++ {
				for _, r := range foreignRows {
					ub.Append(fmt.Sprintf("%s%03d", r.user, b))
					if r.null {
						lb.AppendNull()
						continue
					}
					lb.Append(true)
					for _, x := range r.feats {
						switch vb := lb.ValueBuilder().(type) {
						case *array.Uint32Builder:
							vb.Append(uint32(x))
						case *array.Int64Builder:
							vb.Append(x)
						}
					}
				}
			}
			rec := rb.NewRecordBatch()
			defer rec.Release()
			tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
			defer tbl.Release()
			path := filepath.Join(t.TempDir(), "arrow.parquet")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := pqarrow.WriteTable(tbl, f, 50, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
				t.Fatal(err)
			}
			f.Close()
			pf, err := matrix.OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			groups := pf.NumRowGroups()
			pf.Close()
			got, _, err := matrix.ReadMatrix(path, matrix.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := foreignWant(blocks); !got.Equal(want) || groups < 2 {
				t.Errorf("read %d rows in %d row groups; want %d rows in several:\ngot %v\nwant %v", got.NumRows(), groups, want.NumRows(), got.Row(0), want.Row(0))
			}
		})
	}
}

// TestInteropDuckDBWrites reads files written by DuckDB's COPY ... TO with
// UINTEGER[] and BIGINT[] features.
func TestInteropDuckDBWrites(t *testing.T) {
	if err := exec.Command("python3", "-c", "import duckdb").Run(); err != nil {
		t.Skip("DuckDB cross-check skipped: python3 with the duckdb package is not available (pip install duckdb==1.5.6)")
	}
	const blocks = 3
	var values []string
	for b := 0; b < blocks; b++ {
		for _, r := range foreignRows {
			list := "NULL"
			if !r.null {
				list = "["
				for i, x := range r.feats {
					if i > 0 {
						list += ","
					}
					list += fmt.Sprint(x)
				}
				list += "]"
			}
			values = append(values, fmt.Sprintf("('%s%03d', %s)", r.user, b, list))
		}
	}
	for _, typ := range []string{"UINTEGER[]", "BIGINT[]"} {
		path := filepath.Join(t.TempDir(), "duck.parquet")
		query := fmt.Sprintf("COPY (SELECT user_id, features::%s AS features FROM (VALUES %s) t(user_id, features)) TO '%s' (FORMAT parquet)",
			typ, strings.Join(values, ", "), path)
		var stderr bytes.Buffer
		cmd := exec.Command("python3", "-c", "import duckdb, sys; duckdb.connect().execute(sys.argv[1])", query)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("duckdb COPY %s: %v\n%s", typ, err, stderr.String())
		}
		got, _, err := matrix.ReadMatrix(path, matrix.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if want := foreignWant(blocks); !got.Equal(want) {
			t.Errorf("%s: read %v, want %v", typ, got, want)
		}
	}
}
