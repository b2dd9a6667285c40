package importer

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// read imports data (plain or gzip) in format, named "in" in errors.
func read(format string, data []byte, opts Options) (*matrix.Matrix, Stats, error) {
	r, err := NewReader(bytes.NewReader(data), "in")
	if err != nil {
		return nil, Stats{}, err
	}
	return Read(format, r, "in", opts)
}

// dump renders rows as "user:f1,f2".
func dump(m *matrix.Matrix) []string {
	var out []string
	for i, u := range m.Users {
		var fs []string
		for _, f := range m.Row(i) {
			fs = append(fs, fmt.Sprint(f))
		}
		out = append(out, u+":"+strings.Join(fs, ","))
	}
	return out
}

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type importCase struct {
	name    string
	format  string
	in      string
	opts    Options
	want    []string // rows as dump renders them
	wantErr string   // substring of the error; "" for success
	check   func(t *testing.T, st Stats)
}

func runCases(t *testing.T, cases []importCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, st, err := read(c.format, []byte(c.in), c.opts)
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("no error, want %q; got rows %v", c.wantErr, dump(m))
				}
				if !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %q, want it to contain %q", err, c.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error spans lines: %q", err)
				}
				var ie *Error
				if !errors.As(err, &ie) || ie.Path != "in" {
					t.Fatalf("error %q (%T) is not an *Error naming the input", err, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := dump(m); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("rows\n got %q\nwant %q", got, c.want)
			}
			if st.Columns != m.NumColumns() {
				t.Errorf("Stats.Columns %d, matrix has %d", st.Columns, m.NumColumns())
			}
			if c.check != nil {
				c.check(t, st)
			}
		})
	}
}

const adultSample = `39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
50, ?, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Female, 0, 0, 13, ?, >50K.

`

func TestAdult(t *testing.T) {
	rec := "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K"
	want := []string{"0:1,2,4,5,8,9,11,13", "1:0,2,3,6,7,9,10,12"}
	runCases(t, []importCase{
		{name: "sample", format: "adult", in: adultSample, want: want, check: func(t *testing.T, st Stats) {
			wantNames := []string{
				"workclass=?", "workclass=State-gov", "education=Bachelors",
				"marital-status=Married-civ-spouse", "marital-status=Never-married",
				"occupation=Adm-clerical", "occupation=Exec-managerial",
				"relationship=Husband", "relationship=Not-in-family", "race=White",
				"sex=Female", "sex=Male", "native-country=?", "native-country=United-States",
			}
			if !reflect.DeepEqual(st.FeatureNames, wantNames) {
				t.Errorf("FeatureNames %q, want %q", st.FeatureNames, wantNames)
			}
			if want := []string{"<=50K", ">50K."}; !reflect.DeepEqual(st.Labels, want) {
				t.Errorf("Labels %q, want %q", st.Labels, want)
			}
			if st.Records != 2 || st.Skipped != 1 || st.Lines != 3 {
				t.Errorf("stats %+v, want 2 records, 1 skipped, 3 lines", st)
			}
		}},
		{name: "crlf and no final newline", format: "adult", in: strings.ReplaceAll(strings.TrimRight(adultSample, "\n"), "\n", "\r\n"), want: want},
		{name: "blank lines anywhere", format: "adult", in: "\n  \n" + adultSample, want: want},
		{name: "no spaces after commas", format: "adult", in: strings.ReplaceAll(adultSample, ", ", ","), want: want},
		{name: "single record", format: "adult", in: rec, want: []string{"0:0,1,2,3,4,5,6,7"}},
		{name: "14 fields", format: "adult", in: rec + "\n" + strings.TrimSuffix(rec, ", <=50K"), wantErr: "in:2: got 14 comma-separated fields, want 15"},
		{name: "16 fields", format: "adult", in: rec + ", x", wantErr: "in:1: got 16 comma-separated fields"},
		{name: "bad age", format: "adult", in: strings.Replace(rec, "39", "3x9", 1), wantErr: "in:1: field 1 (age): not a non-negative integer: \"3x9\""},
		{name: "negative hours", format: "adult", in: strings.Replace(rec, " 40,", " -40,", 1), wantErr: "field 13 (hours-per-week)"},
		{name: "empty workclass", format: "adult", in: strings.Replace(rec, "State-gov", "", 1), wantErr: "in:1: field 2 (workclass): empty value"},
		{name: "empty input", format: "adult", in: "", wantErr: "in: empty input"},
		{name: "only blank lines", format: "adult", in: "\n\n", wantErr: "empty input"},
	})
}

const playstoreSample = "App,Category,Rating,Reviews,Size,Installs,Type,Price,Content Rating,Genres,Last Updated,Current Ver,Android Ver\r\n" +
	"A,ART,4.1,159,19M,\"10,000+\",Free,0,Everyone,Art & Design,\"January 7, 2018\",1.0.0,4.0.3 and up\r\n" +
	"B,GAME,NaN,0,201k,1+,Paid,$0.99,Teen,Action;Puzzle,\"May 1, 2018\",Varies with device,2.3 and up\r\n" +
	"C,GAME,4.5,10,Varies with device,1+,Free,0,Teen,Action,\"May 1, 2018\",Varies with device,Varies with device\r\n" +
	"A,ART,4.2,160,19M,\"10,000+\",Free,0,Everyone,Art & Design,\"January 8, 2018\",1.0.1,4.0.3 and up\r\n" +
	"Life Made WI-Fi Touchscreen Photo Frame,1.9,19.0,3.0M,\"1,000+\",Free,0,Everyone,,\"February 11, 2018\",1.0.19,4.0 and up"

func TestPlaystore(t *testing.T) {
	hdr, rows, _ := strings.Cut(playstoreSample, "\r\n")
	rowA, _, _ := strings.Cut(rows, "\r\n")
	withA := func(old, new string) string { return hdr + "\n" + strings.Replace(rowA, old, new, 1) + "\n" }
	want := []string{"A:0,4,8,10,14,15,18,19,22,26", "B:1,5,6,9,12,16,17,20,21,24", "Life Made WI-Fi Touchscreen Photo Frame:2,3,7,11,13,15,18,19,23,25"}
	runCases(t, []importCase{
		{name: "sample", format: "playstore", in: playstoreSample, want: want, check: func(t *testing.T, st Stats) {
			if st.DroppedDuplicates != 1 || st.DroppedVaries != 1 || st.RepairedRows != 1 || st.Records != 5 || st.Lines != 6 {
				t.Errorf("stats %+v, want 1 duplicate, 1 varies, 1 repaired, 5 records, 6 lines", st)
			}
			wantNames := []string{
				"Category=ART", "Category=GAME", "Category=NaN", "Rating=1.9", "Rating=4.1", "Rating=NaN",
				"Reviews=0", "Reviews=10-99", "Reviews=100-999", "Size=0M", "Size=19M", "Size=3M",
				"Installs=1+", "Installs=1,000+", "Installs=10,000+", "Type=Free", "Type=Paid",
				"Price=$0.99", "Price=0", "Content Rating=Everyone", "Content Rating=Teen",
				"Genres=Action;Puzzle", "Genres=Art & Design", "Genres=NaN",
				"Android Ver=2.3 and up", "Android Ver=4.0 and up", "Android Ver=4.0.3 and up",
			}
			if !reflect.DeepEqual(st.FeatureNames, wantNames) {
				t.Errorf("FeatureNames\n got %q\nwant %q", st.FeatureNames, wantNames)
			}
		}},
		{name: "lf and bom", format: "playstore", in: "\ufeff" + strings.ReplaceAll(playstoreSample, "\r\n", "\n"), want: want},
		{name: "size varies, big reviews", format: "playstore", in: withA("159,19M", "78158306,Varies with device"), want: []string{"A:0,1,2,3,4,5,6,7,8,9"}},
		{name: "size fraction", format: "playstore", in: withA("19M", "8.7M"), want: []string{"A:0,1,2,3,4,5,6,7,8,9"}},
		{name: "empty values are NaN", format: "playstore", in: withA(",Everyone,Art & Design,", ",,,"), want: []string{"A:0,1,2,3,4,5,6,7,8,9"}, check: func(t *testing.T, st Stats) {
			if st.FeatureNames[7] != "Content Rating=NaN" || st.FeatureNames[8] != "Genres=NaN" {
				t.Errorf("FeatureNames %q", st.FeatureNames)
			}
		}},
		{name: "bad header", format: "playstore", in: strings.Replace(playstoreSample, "Reviews", "Reveiws", 1), wantErr: "in:1: field 4: header is \"Reveiws\", want \"Reviews\""},
		{name: "short header", format: "playstore", in: "App,Category\nA,B\n", wantErr: "in:1: header has 2 fields"},
		{name: "11 fields", format: "playstore", in: hdr + "\na,b,c,d,e,f,g,h,i,j,k\n", wantErr: "in:2: got 11 fields, want 13"},
		{name: "bad reviews", format: "playstore", in: withA("159", "3.0M"), wantErr: "in:2: field 4 (Reviews): not a non-negative integer: \"3.0M\""},
		{name: "negative reviews", format: "playstore", in: withA("159", "-1"), wantErr: "field 4 (Reviews)"},
		{name: "bad size unit", format: "playstore", in: withA("19M", "19MB"), wantErr: "in:2: field 5 (Size): size \"19MB\""},
		{name: "bad size number", format: "playstore", in: withA("19M", "1e5M"), wantErr: "field 5 (Size): size \"1e5M\": bad number"},
		{name: "empty size", format: "playstore", in: withA("19M", ""), wantErr: "field 5 (Size)"},
		{name: "empty app", format: "playstore", in: hdr + "\n" + rowA[1:] + "\n", wantErr: "in:2: field 1 (App): empty App name"},
		{name: "bare quote", format: "playstore", in: hdr + "\nA\"b,ART,4.1,159,19M,1+,Free,0,Everyone,Art,x,1,2\n", wantErr: "in:2: column"},
		{name: "unterminated quote", format: "playstore", in: hdr + "\n\"A,ART\n", wantErr: "in:"},
		{name: "header only", format: "playstore", in: hdr + "\r\n", wantErr: "in: empty input: no records"},
		{name: "only varies", format: "playstore", in: withA("4.0.3 and up", "Varies with device"), wantErr: "empty input"},
		{name: "repaired row checked", format: "playstore", in: hdr + "\r\na,b,c,d,e,f,g,h,i,j,k,l\r\n", wantErr: "in:2: field 4 (Reviews): not a non-negative integer: \"c\""},
		{name: "repaired row error position", format: "playstore", in: hdr + "\r\n" + rowA + "\r\n\"multi\nline\",1.9,19,\"\n3.0MB\",\"1,000+\",Free,0,Everyone,,x,1,4.0 and up\r\n",
			wantErr: "in:4: field 5 (Size): size \"\\n3.0MB\""},
		{name: "reviews fraction", format: "playstore", in: withA("159", "159.5"), wantErr: "field 4 (Reviews): not a non-negative integer: \"159.5\""},
		{name: "reviews exponent", format: "playstore", in: withA("159", "1e3"), wantErr: "field 4 (Reviews)"},
		{name: "empty file", format: "playstore", in: "", wantErr: "in: empty input: no header"},
	})
}

func TestEdges(t *testing.T) {
	runCases(t, []importCase{
		{name: "directed with comments", format: "edges", in: "# SNAP header\n0 1\n0\t2\n\n  # indented comment\n3\t0\r\n", want: []string{"0:1,2", "1:", "2:", "3:0"}, check: func(t *testing.T, st Stats) {
			if st.Records != 3 || st.Skipped != 3 || st.EmptyRows != 2 || st.Lines != 6 {
				t.Errorf("stats %+v, want 3 records, 3 skipped, 2 empty rows, 6 lines", st)
			}
		}},
		{name: "numeric order, ids kept", format: "edges", in: "10 2\n9 1\n100 10\n", want: []string{"1:", "2:", "9:1", "10:2", "100:10"}},
		{name: "undirected", format: "edges", opts: Options{Undirected: true}, in: "1 2\n2 1\n5 5\n1 7\n", want: []string{"1:2,7", "2:1", "5:5", "7:1"}, check: func(t *testing.T, st Stats) {
			if st.RepeatedEntries != 2 || st.SelfLoops != 1 || st.EmptyRows != 0 {
				t.Errorf("stats %+v, want 2 repeated entries, 1 self-loop, 0 empty rows", st)
			}
		}},
		{name: "byte order mark", format: "edges", in: "\ufeff# c\r\n1 2\r\n", want: []string{"1:2", "2:"}},
		{name: "self-loop directed", format: "edges", in: "4 4\n", want: []string{"4:4"}},
		{name: "repeated edges", format: "edges", in: "1 2\n1 2\n1 3\n1 2\n", want: []string{"1:2,3", "2:", "3:"}, check: func(t *testing.T, st Stats) {
			if st.RepeatedEntries != 2 {
				t.Errorf("RepeatedEntries %d, want 2", st.RepeatedEntries)
			}
		}},
		{name: "max id", format: "edges", in: "4294967295 0\n", want: []string{"0:", "4294967295:0"}},
		{name: "leading zeros and spaces", format: "edges", in: "  007   08  \n", want: []string{"7:8", "8:"}},
		{name: "negative", format: "edges", in: "1 2\n-1 2\n", wantErr: "in:2: field 1 (src): negative id \"-1\""},
		{name: "out of range", format: "edges", in: "1 4294967296\n", wantErr: "in:1: field 2 (dst): id \"4294967296\" out of range"},
		{name: "huge", format: "edges", in: "99999999999999999999999 1\n", wantErr: "out of range"},
		{name: "not a number", format: "edges", in: "a b\n", wantErr: "in:1: field 1 (src): not a non-negative integer: \"a\""},
		{name: "plus sign", format: "edges", in: "+1 2\n", wantErr: "field 1 (src)"},
		{name: "decimal", format: "edges", in: "1 2.0\n", wantErr: "field 2 (dst)"},
		{name: "one field", format: "edges", in: "1\n", wantErr: "in:1: want two node ids"},
		{name: "long garbage quoted short", format: "edges", in: strings.Repeat("x", 1000) + " 1\n", wantErr: "field 1 (src): not a non-negative integer: \"" + strings.Repeat("x", 64) + "\"..."},
		{name: "three fields", format: "edges", in: "1 2 3\n", wantErr: "in:1: field 3: unexpected third field \"3\""},
		{name: "empty", format: "edges", in: "", wantErr: "in: empty input"},
		{name: "only comments", format: "edges", in: "# a\n# b\n\n", wantErr: "empty input"},
	})
}

func TestPairs(t *testing.T) {
	runCases(t, []importCase{
		{name: "first appearance order", format: "pairs", in: "u1\t5\nu0\t3\n# c\nu1\t2\nu1\t5\n\n", want: []string{"u1:2,5", "u0:3"}, check: func(t *testing.T, st Stats) {
			if st.Records != 4 || st.RepeatedEntries != 1 || st.Skipped != 2 {
				t.Errorf("stats %+v, want 4 records, 1 repeated, 2 skipped", st)
			}
		}},
		{name: "byte order mark", format: "pairs", in: "\ufeffa\t1\n", want: []string{"a:1"}},
		{name: "user ids verbatim", format: "pairs", in: "alice smith\t1\r\n 7\t4294967295\n", want: []string{"alice smith:1", " 7:4294967295"}},
		{name: "feature padded", format: "pairs", in: "a\t 3 \n", want: []string{"a:3"}},
		{name: "no tab", format: "pairs", in: "a 1\n", wantErr: "in:1: want \"user<TAB>feature\", found no tab"},
		{name: "empty user", format: "pairs", in: "a\t1\n\t2\n", wantErr: "in:2: field 1 (user): empty user id"},
		{name: "bad feature", format: "pairs", in: "a\tx\n", wantErr: "in:1: field 2 (feature): not a non-negative integer"},
		{name: "two tabs", format: "pairs", in: "a\t1\t2\n", wantErr: "field 2 (feature)"},
		{name: "negative feature", format: "pairs", in: "a\t-3\n", wantErr: "negative id"},
		{name: "feature too big", format: "pairs", in: "a\t4294967296\n", wantErr: "out of range"},
		{name: "empty feature", format: "pairs", in: "a\t\n", wantErr: "empty number"},
		{name: "empty", format: "pairs", in: "#only\n", wantErr: "in: empty input"},
	})
}

func TestGzip(t *testing.T) {
	plain := []byte(adultSample)
	z := gz(t, plain)
	want, _, err := read("adult", plain, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := read("adult", z, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Fatalf("gzip input gives %q, plain %q", dump(got), dump(want))
	}

	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"truncated body", z[:len(z)/2], ErrTruncatedGzip},
		{"truncated trailer", z[:len(z)-3], ErrTruncatedGzip},
		{"magic only", z[:2], ErrTruncatedGzip},
		{"bad checksum", append(slicesClone(z[:len(z)-8]), 0, 0, 0, 0, z[len(z)-4], z[len(z)-3], z[len(z)-2], z[len(z)-1]), ErrCorruptGzip},
		{"bad header", append([]byte{0x1f, 0x8b, 99}, z[3:]...), ErrCorruptGzip},
		{"empty gzip", gz(t, nil), ErrEmpty},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := read("adult", c.data, Options{})
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "in:") {
				t.Fatalf("error %q does not name the input", err)
			}
		})
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

func TestImportFiles(t *testing.T) {
	dir := t.TempDir()
	// gzip is recognised by content, whatever the name says.
	p := filepath.Join(dir, "edges.txt")
	if err := os.WriteFile(p, gz(t, []byte("1 2\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	m, st, err := Import("edges", p, Options{Undirected: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := dump(m); !reflect.DeepEqual(got, []string{"1:2", "2:1"}) || st.Format != "edges" {
		t.Fatalf("got %q, %+v", got, st)
	}
	// A .gz name on plain text is read as plain text.
	p2 := filepath.Join(dir, "pairs.gz")
	if err := os.WriteFile(p2, []byte("u\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Import("pairs", p2, Options{}); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, format, path string
		opts               Options
		want               string
	}{
		{"missing file", "edges", filepath.Join(dir, "nope.txt"), Options{}, "nope.txt: no such file"},
		{"directory", "edges", dir, Options{}, "is a directory"},
		{"unknown format", "csv", p, Options{}, `unknown format "csv"`},
		{"bad options", "adult", p, Options{Undirected: true}, "undirected applies only to the edges format"},
		{"wrong format for file", "adult", p, Options{}, "edges.txt:1: got 1 comma-separated fields, want 15"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Import(c.format, c.path, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestCheckOptions(t *testing.T) {
	for _, c := range []struct {
		format string
		opts   Options
		want   string // "" means valid
	}{
		{"adult", Options{}, ""},
		{"playstore", Options{Dedupe: matrix.DedupeUnion}, ""},
		{"edges", Options{Undirected: true}, ""},
		{"pairs", Options{}, ""},
		{"", Options{}, `unknown format ""`},
		{"Adult", Options{}, `unknown format "Adult"`},
		{"pairs", Options{Undirected: true}, `not "pairs"`},
		{"adult", Options{Undirected: true}, `not "adult"`},
		{"edges", Options{Dedupe: 7}, "invalid dedupe policy 7"},
	} {
		err := CheckOptions(c.format, c.opts)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckOptions(%q, %+v) = %v, want %q", c.format, c.opts, err, c.want)
		}
	}
}

// TestFinishDedupe covers the dedupe safety net, which none of the formats
// triggers on its own.
func TestFinishDedupe(t *testing.T) {
	mk := func() *matrix.Matrix {
		m := matrix.New(3, 4)
		m.Append("a", []uint32{1})
		m.Append("b", nil)
		m.Append("a", []uint32{0, 1})
		return m
	}
	if _, _, err := finish(mk(), &Stats{}, "in", Options{}, false); err == nil || err.Error() != "in: row 2: user id repeats row 0 (merge repeats, e.g. --dedupe=union)" {
		t.Fatalf("refuse: error %v", err)
	}
	m, st, err := finish(mk(), &Stats{}, "in", Options{Dedupe: matrix.DedupeUnion}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := dump(m); !reflect.DeepEqual(got, []string{"a:0,1", "b:"}) || st.MergedRows != 1 || st.EmptyRows != 1 || st.Columns != 2 {
		t.Fatalf("union: rows %q stats %+v", got, st)
	}
}

func TestSortKeys(t *testing.T) {
	for _, n := range []int{0, 1, 5000, 70000} {
		a := make([]uint64, n)
		x := uint64(88172645463325252)
		for i := range a {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			a[i] = x
			if i%3 == 0 {
				a[i] &= 0xffff00000000ffff // constant digits are skipped
			}
		}
		b := slicesClone64(a)
		sortKeys(a)
		for i := 1; i < len(a); i++ {
			if a[i-1] > a[i] {
				t.Fatalf("n=%d: not sorted at %d", n, i)
			}
		}
		// Same multiset: compare sums and xors.
		var s1, s2, x1, x2 uint64
		for i := range a {
			s1 += a[i]
			s2 += b[i]
			x1 ^= a[i]
			x2 ^= b[i]
		}
		if s1 != s2 || x1 != x2 {
			t.Fatalf("n=%d: values changed", n)
		}
	}
}

func slicesClone64(a []uint64) []uint64 { return append([]uint64(nil), a...) }

func TestLongLine(t *testing.T) {
	user := strings.Repeat("u", 600<<10) // longer than the line buffer
	m, _, err := read("pairs", []byte("a\t1\n"+user+"\t2\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.NumRows() != 2 || m.Users[1] != user || m.Row(1)[0] != 2 {
		t.Fatalf("long line misread: %d rows", m.NumRows())
	}
}
