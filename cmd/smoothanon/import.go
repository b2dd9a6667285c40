package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/smoothanon/smoothanon/importer"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
)

func init() {
	register(command{
		name:  "import",
		short: "convert a text dataset (adult, playstore, edges, pairs) to Parquet",
		run:   runImport,
	})
}

func runImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", stderr)
	format := fs.String("format", "", "input format: "+strings.Join(importer.Formats(), ", ")+" (required)")
	input := fs.String("input", "", "input file, plain or gzip (required)")
	output := fs.String("output", "", "output Parquet file, written atomically (required)")
	undirected := fs.Bool("undirected", false, "edges: add the reverse of every edge")
	dedupe := dedupeFlag(fs, "repeated user ids: refuse or union")
	features := fs.String("features", "", "adult, playstore: also write the feature names as \"id<TAB>name\" lines to this file")
	labels := fs.String("labels", "", "adult: also write each row's income label (never a feature) as \"user_id<TAB>label\" lines to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *format == "":
		return usageErr("missing --format (one of %s)", strings.Join(importer.Formats(), ", "))
	case *input == "":
		return usageErr("missing --input")
	case *output == "":
		return usageErr("missing --output")
	case storage.Clean(*output) == storage.Clean(*input):
		return usageErr("--output %s is the input file", *output)
	case *labels != "" && *format != importer.FormatAdult:
		return usageErr("--labels applies only to the adult format, not %q", *format)
	}
	if err := distinctPaths(map[string]string{"--input": *input, "--output": *output, "--features": *features, "--labels": *labels}); err != nil {
		return err
	}
	opts := importer.Options{Undirected: *undirected, Dedupe: *dedupe}
	if err := importer.CheckOptions(*format, opts); err != nil {
		return usageErr("%v", err)
	}
	if *features != "" && (*format == importer.FormatEdges || *format == importer.FormatPairs) {
		return usageErr("--features applies only to one-hot formats (adult, playstore), not %q", *format)
	}

	m, st, err := importer.Import(*format, *input, opts)
	if err != nil {
		return inputErr(err)
	}
	if err := writeImport(m, st, *output, *features, *labels); err != nil {
		return inputErr(err)
	}
	fmt.Fprintf(stderr, "smoothanon import: %s %s: %d rows, %d columns, %d entries%s -> %s\n",
		*format, *input, m.NumRows(), st.Columns, m.NumEntries(), importNotes(st), *output)
	return nil
}

// writeImport writes the matrix to output and, where asked, the feature
// names and the labels beside it: all of them or, on an error, none.
func writeImport(m *matrix.Matrix, st importer.Stats, output, features, labels string) error {
	var written []string
	fail := func(err error) error {
		for _, p := range written {
			storage.Remove(context.Background(), p)
		}
		return err
	}
	if features != "" {
		if err := writeFeatureNames(features, st.FeatureNames); err != nil {
			return fail(err)
		}
		written = append(written, features)
	}
	if labels != "" {
		if err := writeLabels(labels, m.Users, st.Labels); err != nil {
			return fail(err)
		}
		written = append(written, labels)
	}
	if err := matrix.WriteMatrix(output, m, matrix.WriterOptions{}); err != nil {
		return fail(err)
	}
	return nil
}

// distinctPaths refuses two of the named paths (empty ones ignored) that
// are one file.
func distinctPaths(paths map[string]string) error {
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(paths)) {
		p := paths[name]
		if p == "" {
			continue
		}
		if other, ok := seen[storage.Clean(p)]; ok {
			return usageErr("%s %s is also %s", name, p, other)
		}
		seen[storage.Clean(p)] = name
	}
	return nil
}

// writeLabels writes "user_id<TAB>label" lines, one per row, to path
// atomically; a label holding a tab or line break is written Go-quoted.
func writeLabels(path string, users, labels []string) error {
	if len(users) != len(labels) {
		return fmt.Errorf("%d labels for %d rows", len(labels), len(users))
	}
	var b bytes.Buffer
	for i, l := range labels {
		if strings.ContainsAny(l, "\t\r\n") {
			l = strconv.Quote(l)
		}
		fmt.Fprintf(&b, "%s\t%s\n", users[i], l)
	}
	return writeFileAtomic(path, b.Bytes())
}

// importNotes summarises what the import skipped or merged, if anything.
func importNotes(st importer.Stats) string {
	var notes []string
	add := func(n int64, what string) {
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d", what, n))
		}
	}
	add(st.Skipped, "blank/comment lines skipped")
	add(int64(st.RepairedRows), "12-field rows repaired")
	add(int64(st.DroppedVaries), "rows with Android Ver \"Varies with device\" dropped")
	add(int64(st.DroppedDuplicates), "repeated App rows dropped")
	add(st.RepeatedEntries, "repeated entries merged")
	add(st.SelfLoops, "self-loops")
	add(int64(st.EmptyRows), "empty rows")
	add(int64(st.MergedRows), "rows merged by --dedupe=union")
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// writeFeatureNames writes "id<TAB>name" lines to path atomically; a name
// holding a tab or line break is written Go-quoted.
func writeFeatureNames(path string, names []string) error {
	var b bytes.Buffer
	for id, n := range names {
		if strings.ContainsAny(n, "\t\r\n") {
			n = strconv.Quote(n) // keep one line per feature
		}
		fmt.Fprintf(&b, "%d\t%s\n", id, n)
	}
	return writeFileAtomic(path, b.Bytes())
}
