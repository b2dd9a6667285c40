package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
	if *features != "" {
		if err := writeFeatureNames(*features, st.FeatureNames); err != nil {
			return inputErr(err)
		}
	}
	if err := matrix.WriteMatrix(*output, m, matrix.WriterOptions{}); err != nil {
		if *features != "" {
			storage.Remove(context.Background(), *features)
		}
		return inputErr(err)
	}
	fmt.Fprintf(stderr, "smoothanon import: %s %s: %d rows, %d columns, %d entries%s -> %s\n",
		*format, *input, m.NumRows(), st.Columns, m.NumEntries(), importNotes(st), *output)
	return nil
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
