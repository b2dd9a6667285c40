package transforms

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/smoothanon/smoothanon/matrix"
)

var listLayoutIDs = matrix.Layout{Shape: matrix.ShapeList, User: matrix.ColUserID, Feature: matrix.ColFeatures}

// TestRead: two files of many row groups, one user of more than
// MaxBlockEntries features among them, read into blocks within the
// bounds that hold every user once with its features.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	m := testUsers(600, rand.New(rand.NewPCG(3, 4)))
	var files, want []string
	for i, part := range []struct{ from, to int }{{0, 250}, {250, 600}} {
		sub := matrix.New(part.to-part.from, 0)
		for r := part.from; r < part.to; r++ {
			sub.Append(m.Users[r], m.Row(r))
			want = append(want, fmt.Sprintf("%s %v", m.Users[r], m.Row(r)))
		}
		path := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i))
		if err := matrix.WriteMatrix(path, sub, matrix.WriterOptions{RowGroupRows: 40}); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	p, s := beam.NewPipelineWithRoot()
	blocks := Read(s, files, ReadParams{Layout: listLayoutIDs})
	passert.Equals(s, beam.ParDo(s, describeRows, blocks), beam.CreateList(s, want))
	passert.Empty(s, beam.ParDo(s, blockBounds, blocks))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestReadRefused: a missing file and a file that is not Parquet each
// fail the job with a one-line input error naming the file.
func TestReadRefused(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.parquet")
	if err := os.WriteFile(junk, []byte("user_id,features\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.parquet"), junk} {
		p, s := beam.NewPipelineWithRoot()
		Read(s, []string{path}, ReadParams{Layout: listLayoutIDs})
		err := ptest.Run(p)
		if line, ok := JobInputError(err); !ok || !strings.Contains(line, path) || strings.Contains(line, "\n") {
			t.Errorf("%s: job error %v: input error %q, want one line naming the file", path, err, line)
		}
	}
}

// TestReadParamsPanic: a long-form layout, and named features without a
// vocabulary, are programming errors caught when Read is applied.
func TestReadParamsPanic(t *testing.T) {
	named := listLayoutIDs
	named.Values = matrix.ValuesStrings
	for name, l := range map[string]matrix.Layout{"long form": longLayout, "names without vocabulary": named} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Read applied without a panic", name)
				}
			}()
			_, s := beam.NewPipelineWithRoot()
			Read(s, []string{"x.parquet"}, ReadParams{Layout: l})
		}()
	}
}
