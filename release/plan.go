package release

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
)

// Plan is what a run reads and writes, known before any work starts.
type Plan struct {
	// InputSpec is the input as given (a file, directory, glob or comma
	// list); InputFiles are the files it names (matrix.ListFiles).
	// Required.
	InputSpec  string
	InputFiles []string
	// Output is the release: a directory of shards when Dir (run), else
	// one Parquet file (solve, baseline). A literal location, local or a
	// gs:// or s3:// URI. Required.
	Output string
	Dir    bool
	// RunID names a directory release in its manifest; a run into an
	// output whose manifest carries RunID does nothing. Required when
	// Dir; CheckRunID's alphabet.
	RunID string
	// InputRows is the rows of the input files, from their footers (in
	// long form, the pairs), when known. The manifest records it, and a
	// release of RunID that records other input rows is not taken for
	// this night's. Optional; 0 skips the check.
	InputRows int64
	// Users is the rows the release must hold, when the footers tell
	// (list form: InputRows; long form: unknown before the job groups
	// the pairs). A release of RunID with other total rows is not taken
	// for this night's. Optional; 0 skips the check.
	Users int64
	// Shape is the release's shape: matrix.ShapeLong writes a row per
	// released (user, feature) pair (storage.ShapeLong), and its manifest
	// records the shape and the users; a release of RunID in the other
	// shape is not taken for this night's. Optional; default (ShapeAuto)
	// and ShapeList are list form.
	Shape matrix.Shape
	// Overwrite allows replacing a published release (and a report that
	// is not a failed run's). Nothing that is not a release's own file is
	// ever replaced or deleted. Optional; default false.
	Overwrite bool
	// Report is where the run report goes: "" nowhere, "-" Stdout, else
	// a file or object, written atomically at the end of the run,
	// published or not. Optional.
	Report string
	Stdout io.Writer
	// KeyOut is a local path where a drawn pseudonym key is saved, only
	// if the release is published (create-exclusive, mode 0600).
	// Optional.
	KeyOut string
	// Date is recorded in the report (run --date). Optional.
	Date string
	// Gate is the quality gate a valid release must meet to be
	// published. Optional; the zero Gate checks nothing.
	Gate Gate
	// FeatureTable is where the full per-feature table goes
	// (verify.WriteFeatureTable: CSV, one line per feature): a file or an
	// object, written atomically once the release is published, never
	// when the run publishes nothing. It counts what the input's users
	// held, so it is checked like every other output: literal, distinct,
	// outside the release and the input, and an existing file is
	// replaced only if it is a feature table and Overwrite is set.
	// Optional; "" writes none.
	FeatureTable string
}

// PlanError is a plan refused before any work: bad names, outputs that
// collide with each other or with the input, or an output that exists.
type PlanError struct{ Err error }

func (e *PlanError) Error() string { return e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// checkPlan checks what needs no store: names, and that the outputs are
// distinct and do not overlap the input.
func checkPlan(p Plan) error {
	switch {
	case p.InputSpec == "" || len(p.InputFiles) == 0:
		return errors.New("no input")
	case p.Output == "":
		return errors.New("no output")
	case p.Dir && p.RunID == "":
		return errors.New("no run id")
	case p.Report == "-" && p.Stdout == nil:
		return errors.New("report to stdout without a writer")
	}
	if err := p.Gate.Check(); err != nil {
		return err
	}
	if p.Dir {
		if err := CheckRunID(p.RunID); err != nil {
			return err
		}
	}
	outs := []struct{ flag, path string }{{"--output", p.Output}}
	if p.Report != "" && p.Report != "-" {
		outs = append(outs, struct{ flag, path string }{"--metrics_out", p.Report})
	}
	if p.KeyOut != "" {
		if !storage.IsLocal(p.KeyOut) {
			return fmt.Errorf("--pseudonym_key_out %s: a key is saved to a local file only", p.KeyOut)
		}
		outs = append(outs, struct{ flag, path string }{"--pseudonym_key_out", p.KeyOut})
	}
	if p.FeatureTable != "" {
		outs = append(outs, struct{ flag, path string }{"--feature_report", p.FeatureTable})
	}
	resolved := make([]string, len(outs))
	for i, o := range outs {
		if err := storage.CheckLiteral(o.path); err != nil {
			return fmt.Errorf("%s %w", o.flag, err)
		}
		if _, base := storage.Split(o.path); base == "" || base == "." || base == ".." {
			return fmt.Errorf("%s %s: name a file or directory", o.flag, o.path)
		}
		if dir, _ := storage.Split(storage.Clean(o.path)); !storage.IsLocal(o.path) && dir == storage.Scheme(o.path)+"://" {
			return fmt.Errorf("%s %s: name an object inside the bucket, not the bucket", o.flag, o.path)
		}
		r, err := resolve(o.path)
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		resolved[i] = r
		for j := range i {
			if r == resolved[j] {
				return fmt.Errorf("%s and %s are both %s: each output needs a place of its own", outs[j].flag, o.flag, o.path)
			}
			if j == 0 && inside(r, resolved[0]) {
				return fmt.Errorf("%s %s is inside the release %s", o.flag, o.path, p.Output)
			}
		}
	}
	return checkOverlap(p, resolved[0])
}

// checkOverlap refuses a release that could destroy or re-read the input:
// an input file as the output, an input inside the output directory, or
// a release file that the input spec itself would name (a single-file
// release in an input directory, a shard matching an input glob).
func checkOverlap(p Plan, out string) error {
	for _, f := range p.InputFiles {
		in, err := resolve(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if in == out {
			return fmt.Errorf("--output %s is an input file", p.Output)
		}
		if inside(in, out) {
			return fmt.Errorf("--output %s holds the input file %s: the release must be written outside the input", p.Output, f)
		}
	}
	// A file the release will hold: the output itself, or a shard.
	made := out
	if p.Dir {
		made = storage.Join(out, publishedName("part-00000-of-00001.parquet", strings.Repeat("0", 2*tokenBytes)))
	}
	for _, part := range strings.Split(p.InputSpec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if readsAs(part, made) {
			return fmt.Errorf("--output %s: the input %s would read the release as input in the next run; write it elsewhere", p.Output, part)
		}
	}
	return nil
}

// readsAs reports whether the input spec part would read the file made
// (resolved): a glob matching it or its directory (a matched directory is
// read as its *.parquet files), or a directory holding it directly.
func readsAs(part, made string) bool {
	dir, _ := storage.Split(made)
	if storage.HasGlob(part) {
		pattern, ok := resolveGlob(part)
		if !ok {
			return false
		}
		for _, name := range []string{made, dir} {
			if ok, _ := path.Match(filepath.ToSlash(pattern), filepath.ToSlash(name)); ok {
				return true
			}
		}
		return false
	}
	r, err := resolve(part)
	if err != nil || !strings.HasSuffix(made, ".parquet") {
		return false
	}
	if storage.IsLocal(part) {
		if st, err := os.Stat(part); err != nil || !st.IsDir() {
			return false
		}
	}
	return dir == r
}

// resolveGlob resolves the literal directory before a glob's first glob
// character (resolve) and puts the rest of the glob back on it.
func resolveGlob(glob string) (string, bool) {
	i := strings.IndexAny(glob, "*?[")
	sep := "/"
	if storage.IsLocal(glob) {
		sep = string(filepath.Separator)
	}
	cut := strings.LastIndex(glob[:i], sep)
	dir, rest := ".", glob
	if cut >= 0 {
		dir, rest = glob[:cut], glob[cut+1:]
		if dir == "" {
			dir = sep
		}
	}
	if !storage.IsLocal(glob) && !strings.Contains(dir, "://") {
		return "", false
	}
	rdir, err := resolve(dir)
	if err != nil {
		return "", false
	}
	return strings.TrimSuffix(rdir, sep) + sep + rest, true
}

// resolve makes a path comparable: a local path absolute, with the
// symbolic links of its longest existing ancestor resolved; a URI
// without a trailing slash.
func resolve(p string) (string, error) {
	if !storage.IsLocal(p) {
		return storage.Clean(p), nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	cur, rest := abs, ""
	for {
		if _, err := os.Lstat(cur); err == nil {
			break
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil {
		return "", err
	}
	return filepath.Join(real, rest), nil
}

// inside reports whether path lies strictly below dir (both resolved).
func inside(path, dir string) bool {
	sep := "/"
	if storage.IsLocal(dir) {
		sep = string(filepath.Separator)
	}
	return strings.HasPrefix(path, strings.TrimSuffix(dir, sep)+sep)
}

// long says the release is written in long form.
func (p Plan) long() bool { return p.Shape == matrix.ShapeLong }

// shapeOf names the release shape for messages: long or list.
func shapeOf(long bool) matrix.Shape {
	if long {
		return matrix.ShapeLong
	}
	return matrix.ShapeList
}
