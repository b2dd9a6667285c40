package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/internal/datasets"
	"github.com/smoothanon/smoothanon/matrix"
)

const importAdultSample = `39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
50, ?, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Female, 0, 0, 13, ?, <=50K

`

// importRows renders a matrix as user -> features.
func importRows(m *matrix.Matrix) map[string][]uint32 {
	out := make(map[string][]uint32, m.NumRows())
	for i, u := range m.Users {
		out[u] = append([]uint32{}, m.Row(i)...)
	}
	return out
}

func importGzip(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// importDirNames lists the names in dir.
func importDirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	adult := write("adult.data", []byte(importAdultSample))
	edges := write("edges.bin", importGzip(t, []byte("# graph\n1 2\n2\t3\n")))
	pairs := write("pairs.tsv", []byte("bob\t7\nann\t3\nbob\t1\n"))

	for _, c := range []struct {
		name      string
		args      []string
		want      map[string][]uint32
		wantNames string // --features file content, if requested
		summary   string
	}{
		{"adult", []string{"--format", "adult", "--input", adult},
			map[string][]uint32{"0": {1, 2, 4, 5, 8, 9, 11, 13}, "1": {0, 2, 3, 6, 7, 9, 10, 12}}, "", "2 rows, 14 columns, 16 entries (blank/comment lines skipped: 1)"},
		{"adult with features", []string{"--format=adult", "--input=" + adult, "--features", filepath.Join(dir, "names.tsv")},
			map[string][]uint32{"0": {1, 2, 4, 5, 8, 9, 11, 13}, "1": {0, 2, 3, 6, 7, 9, 10, 12}}, "0\tworkclass=?\n1\tworkclass=State-gov\n2\teducation=Bachelors\n", "16 entries"},
		{"edges undirected gzip", []string{"--format", "edges", "--input", edges, "--undirected"},
			map[string][]uint32{"1": {2}, "2": {1, 3}, "3": {2}}, "", "3 rows, 3 columns, 4 entries (blank/comment lines skipped: 1)"},
		{"edges directed", []string{"--format", "edges", "--input", edges},
			map[string][]uint32{"1": {2}, "2": {3}, "3": {}}, "", "3 rows, 2 columns, 2 entries (blank/comment lines skipped: 1; empty rows: 1)"},
		{"pairs union", []string{"--format", "pairs", "--input", pairs, "--dedupe=union"},
			map[string][]uint32{"bob": {1, 7}, "ann": {3}}, "", "2 rows, 3 columns, 3 entries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".parquet")
			var stdout, stderr bytes.Buffer
			code := runMain(append([]string{"import", "--output", out}, c.args...), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			if s := stderr.String(); !strings.Contains(s, c.summary) || strings.Count(s, "\n") != 1 {
				t.Errorf("summary %q, want one line containing %q", s, c.summary)
			}
			m, _, err := matrix.ReadMatrix(out, matrix.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := importRows(m); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("rows %v, want %v", got, c.want)
			}
			if c.wantNames != "" {
				b, err := os.ReadFile(filepath.Join(dir, "names.tsv"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(string(b), c.wantNames) || strings.Count(string(b), "\n") != 14 {
					t.Errorf("feature names file:\n%s", b)
				}
			}
		})
	}
}

// TestImportLabels: adult's income labels come out beside the rows, one
// line per row under its user id, as a run with --user_ids keep names it.
func TestImportLabels(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "adult.data")
	data := strings.Replace(importAdultSample, "13, ?, <=50K", "13, ?, >50K.", 1)
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out, labels := filepath.Join(dir, "adult.parquet"), filepath.Join(dir, "labels.tsv")
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"import", "--format", "adult", "--input", in, "--output", out, "--labels", labels}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(labels)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\t<=50K\n1\t>50K.\n"; string(b) != want {
		t.Fatalf("labels file %q, want %q", b, want)
	}
	m, _, err := matrix.ReadMatrix(out, matrix.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.NumEntries() != 16 {
		t.Errorf("%d entries: the label must not be a feature", m.NumEntries())
	}
	// A failed write of the matrix leaves no labels behind.
	bad := filepath.Join(dir, "missing", "x.parquet")
	labels2 := filepath.Join(dir, "labels2.tsv")
	if code := runMain([]string{"import", "--format", "adult", "--input", in, "--output", bad, "--labels", labels2}, &stdout, &stderr); code == 0 {
		t.Fatal("import into a missing directory succeeded")
	}
	if _, err := os.Stat(labels2); !os.IsNotExist(err) {
		t.Errorf("labels left behind after a failed import: %v", err)
	}
}

func TestImportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.txt", []byte("1 2\n"))
	z := importGzip(t, []byte(strings.Repeat(importAdultSample, 50)))
	for _, c := range []struct {
		name string
		args []string // --output is added unless the case is about it
		want string
	}{
		{"missing file", []string{"--format", "edges", "--input", filepath.Join(dir, "nope")}, "nope: no such file or directory"},
		{"empty input", []string{"--format", "edges", "--input", write("empty.txt", nil)}, "empty.txt: empty input"},
		{"truncated gzip", []string{"--format", "adult", "--input", write("trunc.gz", z[:len(z)-10])}, "trunc.gz: truncated gzip input"},
		{"bad number", []string{"--format", "edges", "--input", write("bad.txt", []byte("1 2\n3 x\n"))}, "bad.txt:2: field 2 (dst): not a non-negative integer"},
		{"negative id", []string{"--format", "edges", "--input", write("neg.txt", []byte("-5 2\n"))}, "neg.txt:1: field 1 (src): negative id"},
		{"over-range id", []string{"--format", "pairs", "--input", write("big.tsv", []byte("u\t4294967296\n"))}, "big.tsv:1: field 2 (feature): id \"4294967296\" out of range"},
		{"wrong field count", []string{"--format", "adult", "--input", write("short.data", []byte("1, a, 2\n"))}, "short.data:1: got 3 comma-separated fields, want 15"},
		{"unknown format", []string{"--format", "csv", "--input", good}, `unknown format "csv"`},
		{"missing format", []string{"--input", good}, "missing --format"},
		{"missing input", []string{"--format", "edges"}, "missing --input"},
		{"undirected on pairs", []string{"--format", "pairs", "--input", good, "--undirected"}, "undirected applies only to the edges format"},
		{"bad dedupe", []string{"--format", "edges", "--input", good, "--dedupe", "merge"}, `invalid dedupe policy "merge"`},
		{"features on edges", []string{"--format", "edges", "--input", good, "--features", filepath.Join(dir, "f.tsv")}, "--features applies only"},
		{"labels on edges", []string{"--format", "edges", "--input", good, "--labels", filepath.Join(dir, "l.tsv")}, "--labels applies only to the adult format"},
		{"labels are the input", []string{"--format", "adult", "--input", good, "--labels", good}, "--labels " + good + " is also --input"},
		{"labels are the features", []string{"--format", "adult", "--input", good, "--labels", filepath.Join(dir, "f.tsv"), "--features", filepath.Join(dir, "f.tsv")}, "is also --features"},
		{"labels are the output", []string{"--format", "adult", "--input", good, "--labels", filepath.Join(dir, "out.parquet")}, "is also --labels"},
		{"stray argument", []string{"--format", "edges", "--input", good, "extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"--format", "edges", "--input", good, "--directed"}, "flag provided but not defined"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := importDirNames(t, dir)
			out := filepath.Join(dir, "out.parquet")
			var stdout, stderr bytes.Buffer
			code := runMain(append([]string{"import", "--output", out}, c.args...), &stdout, &stderr)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("stderr %q, want it to contain %q", stderr.String(), c.want)
			}
			if after := importDirNames(t, dir); !reflect.DeepEqual(after, before) {
				t.Fatalf("files left behind: before %v, after %v", before, after)
			}
		})
	}

	t.Run("missing output", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := runMain([]string{"import", "--format", "edges", "--input", good}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "missing --output") {
			t.Fatalf("exit %d, stderr %q", code, stderr.String())
		}
	})
	t.Run("output is input", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := runMain([]string{"import", "--format", "edges", "--input", good, "--output", good}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "is the input file") {
			t.Fatalf("exit %d, stderr %q", code, stderr.String())
		}
	})
	t.Run("failure keeps an existing output", func(t *testing.T) {
		out := write("keep.parquet", []byte("previous"))
		var stdout, stderr bytes.Buffer
		if code := runMain([]string{"import", "--format", "edges", "--input", filepath.Join(dir, "bad.txt"), "--output", out}, &stdout, &stderr); code != 2 {
			t.Fatalf("exit %d", code)
		}
		if b, _ := os.ReadFile(out); string(b) != "previous" {
			t.Fatalf("existing output changed to %q", b)
		}
	})
}

// TestImportCommandAdultDataset runs the command on the shared adult dataset.
func TestImportCommandAdultDataset(t *testing.T) {
	p := datasets.PathForTest(t, "adult")
	out := filepath.Join(t.TempDir(), "adult.parquet")
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"import", "--format", "adult", "--input", p, "--output", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "32561 rows, 102 columns, 260488 entries") {
		t.Errorf("summary %q", stderr.String())
	}
	m, _, err := matrix.ReadMatrix(out, matrix.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.NumRows() != 32561 || m.NumEntries() != 260488 || m.NumColumns() != 102 {
		t.Fatalf("read back %d rows, %d entries, %d columns", m.NumRows(), m.NumEntries(), m.NumColumns())
	}
}
