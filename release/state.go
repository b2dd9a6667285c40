package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
)

// dirState is what a directory release's output holds.
type dirState struct {
	exists, isDir bool
	// manifest is the published release's, nil if none; version is its
	// _SUCCESS's Attrs.Version.
	manifest *storage.Manifest
	version  string
	// names are the entries under the output, relative to it (an object
	// nested deeper keeps its "/").
	names []string
	// marker says _SUCCESS is an empty file (another tool's marker), not
	// a manifest.
	marker bool
}

// emptyMarker reports whether dir/_SUCCESS is an empty file.
func emptyMarker(ctx context.Context, dir string) bool {
	a, err := storage.Stat(ctx, storage.Join(dir, storage.SuccessName))
	return err == nil && a.Size == 0
}

// inspectDir reads the state of the directory release out.
func inspectDir(ctx context.Context, out string) (dirState, error) {
	var st dirState
	if storage.IsLocal(out) {
		if fi, err := os.Stat(out); err == nil && !fi.IsDir() {
			st.exists = true
			return st, nil
		}
	}
	m, a, err := storage.ReadManifestVersioned(ctx, out)
	switch {
	case err == nil:
		st.manifest, st.version = m, a.Version
	case errors.Is(err, storage.ErrNotRelease):
	case emptyMarker(ctx, out):
		st.marker = true // Hadoop's or Spark's empty _SUCCESS: not a release
	default:
		return st, err
	}
	if !storage.IsLocal(out) {
		objs, err := storage.ListTree(ctx, out)
		if err != nil {
			return st, err
		}
		prefix := storage.Clean(out) + "/"
		for _, o := range objs {
			st.names = append(st.names, strings.TrimPrefix(o, prefix))
		}
		st.exists, st.isDir = len(objs) > 0, true
		return st, nil
	}
	fi, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.exists, st.isDir = true, fi.IsDir()
	if !st.isDir {
		return st, nil
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return st, err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		st.names = append(st.names, n)
	}
	return st, nil
}

// listed reports whether name is a shard of the published release. Only a
// shard's name can be: a manifest listing anything else (a path, _SUCCESS,
// another file) is not one this tool wrote (badListing), and nothing it
// names is ever taken for a release's own file.
func (s dirState) listed(name string) bool {
	return s.manifest != nil && storage.IsShardName(name) &&
		slices.ContainsFunc(s.manifest.Shards, func(sh storage.Shard) bool { return sh.Name == name })
}

// badListing returns a name the manifest lists that is not a shard's.
func (s dirState) badListing() (string, bool) {
	if s.manifest == nil {
		return "", false
	}
	for _, sh := range s.manifest.Shards {
		if !storage.IsShardName(sh.Name) {
			return sh.Name, true
		}
	}
	return "", false
}

// own reports whether name is a file a release or a run makes: the
// manifest, a shard it lists, a shard some run copied (token-named), or
// a temporary of an atomic write there.
func (s dirState) own(name string) bool {
	if name == storage.SuccessName && !s.marker || s.listed(name) {
		return true
	}
	if _, ok := shardToken(name); ok {
		return true
	}
	return strings.HasPrefix(name, storage.TempPrefix(storage.SuccessName)) || storage.IsCreating(name)
}

// foreign are the entries that no release or run made.
func (s dirState) foreign() []string {
	var out []string
	for _, n := range s.names {
		if !s.own(n) {
			out = append(out, n)
		}
	}
	return out
}

// check decides whether a run of plan may publish into the directory:
// nil to go on, ErrAlreadyPublished for a rerun of the published run id.
func (s dirState) check(p Plan) error {
	switch {
	case !s.exists:
		return nil
	case !s.isDir:
		return fmt.Errorf("--output %s is a file: run writes a release directory", p.Output)
	}
	if name, bad := s.badListing(); bad {
		return fmt.Errorf("--output %s: its _SUCCESS lists %q, which is not a shard's name: not a release this tool published; refusing to touch it", p.Output, name)
	}
	switch {
	case s.manifest != nil && s.manifest.RunID == p.RunID:
		if err := s.matches(p); err != nil {
			return err
		}
		return &AlreadyPublishedError{Output: p.Output, RunID: p.RunID}
	case s.manifest != nil && !p.Overwrite:
		return fmt.Errorf("--output %s holds the release of run %s (pass --overwrite to replace it)", p.Output, s.manifest.RunID)
	}
	if f := s.foreign(); len(f) > 0 {
		what := "is not empty"
		if s.manifest != nil {
			what = "holds files that are not its release's"
		}
		return fmt.Errorf("--output %s %s (%s%s): a run writes into an empty directory or over a release, and deletes nothing else",
			p.Output, what, f[0], more(len(f)-1))
	}
	return nil
}

// matches checks that the published release of the plan's run id is a
// release of this input (its rows are the input's, when known) and whole
// (every shard listed is there), before a rerun takes the night as done.
func (s dirState) matches(p Plan) error {
	m := s.manifest
	if p.InputRows > 0 && m.InputRows > 0 && m.InputRows != p.InputRows {
		return fmt.Errorf("--output %s holds a release of run %s made from %d input rows, but the input has %d: not this input's release; pass another --run_id (with --overwrite) to replace it",
			p.Output, p.RunID, m.InputRows, p.InputRows)
	}
	if long := m.Shape == storage.ShapeLong; long != p.long() {
		return fmt.Errorf("--output %s holds a release of run %s in %s form, but this run writes %s form: not this run's release; pass another --run_id (with --overwrite) to replace it",
			p.Output, p.RunID, shapeOf(long), shapeOf(p.long()))
	}
	if p.Users > 0 && m.ReleasedUsers() != p.Users {
		return fmt.Errorf("--output %s holds a release of run %s with %d users, but the input has %d: not this input's release; pass another --run_id (with --overwrite) to replace it",
			p.Output, p.RunID, m.ReleasedUsers(), p.Users)
	}
	for _, sh := range m.Shards {
		if !slices.Contains(s.names, sh.Name) {
			return fmt.Errorf("--output %s: the release of run %s lacks its shard %s; pass another --run_id (with --overwrite) to replace it", p.Output, p.RunID, sh.Name)
		}
	}
	return nil
}

func more(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

// fileState is what a single-file release's output path holds.
type fileState struct {
	exists  bool
	version string
	// release says the file is a release (it carries the release marker,
	// or the pseudonym mark of releases made before the marker).
	release     bool
	fingerprint string
}

// inspectFile reads the state of the single-file release out.
func inspectFile(ctx context.Context, out string) (fileState, error) {
	a, err := storage.Stat(ctx, out)
	if errors.Is(err, storage.ErrNotExist) {
		return fileState{}, nil
	}
	if err != nil {
		return fileState{}, fmt.Errorf("--output %w", err)
	}
	st := fileState{exists: true, version: a.Version}
	f, err := matrix.OpenFile(out)
	if err != nil {
		return st, nil // not a readable Parquet file of rows: not a release
	}
	defer f.Close()
	_, marked := f.Metadata(matrix.MetaRelease)
	_, pseudo := f.Metadata(pseudonym.MetadataKey)
	st.release = marked || pseudo
	st.fingerprint, _ = f.Metadata(matrix.MetaKeyFingerprint)
	return st, nil
}

func (s fileState) check(p Plan) error {
	switch {
	case !s.exists:
		return nil
	case !p.Overwrite:
		return fmt.Errorf("--output %s exists (pass --overwrite to replace a release)", p.Output)
	case !s.release:
		return fmt.Errorf("--output %s exists and is not a release: --overwrite replaces releases only", p.Output)
	}
	return nil
}

// checkReport says whether the report may be written: not an input file
// nor a file the input would read, and not existing, unless it is a run
// report and either Overwrite is set or it says its run published nothing
// (a failed night's, which the retry replaces). Nothing but a report is
// ever replaced there.
func checkReport(ctx context.Context, p Plan) error {
	path := p.Report
	if path == "" || path == "-" {
		return nil
	}
	rp, err := resolve(path)
	if err != nil {
		return fmt.Errorf("--metrics_out %s: %w", path, err)
	}
	for _, f := range p.InputFiles {
		if in, err := resolve(f); err == nil && in == rp {
			return fmt.Errorf("--metrics_out %s is an input file", path)
		}
	}
	for _, part := range strings.Split(p.InputSpec, ",") {
		if part = strings.TrimSpace(part); part != "" && readsAs(part, rp) {
			return fmt.Errorf("--metrics_out %s: the input %s would read it as input", path, part)
		}
	}
	b, err := storage.ReadFile(ctx, path)
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--metrics_out %w", err)
	}
	switch {
	case !isReport(b):
		return fmt.Errorf("--metrics_out %s exists and is not a run report: only a report is ever replaced there", path)
	case p.Overwrite || failedReport(b):
		return nil
	}
	return fmt.Errorf("--metrics_out %s exists (pass --overwrite to replace it)", path)
}

// isReport reports whether b is a run report as commands write them
// (EncodeReport: every field, by its proto name).
func isReport(b []byte) bool {
	var r map[string]json.RawMessage
	if json.Unmarshal(b, &r) != nil {
		return false
	}
	for _, k := range []string{"k", "valid", "rows", "jaccard", "problems"} {
		if _, ok := r[k]; !ok {
			return false
		}
	}
	return true
}

// failedReport reports whether the report b says its run published
// nothing.
func failedReport(b []byte) bool {
	var r struct {
		Published *bool `json:"published"`
	}
	return json.Unmarshal(b, &r) == nil && r.Published != nil && !*r.Published
}

// sameOutput reports whether a and b name one location.
func sameOutput(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ra, err1 := resolve(a)
	rb, err2 := resolve(b)
	return err1 == nil && err2 == nil && ra == rb
}

// checkKeyOut refuses an existing key path: a key is never overwritten.
func checkKeyOut(path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("--pseudonym_key_out %s exists (a key is never overwritten)", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--pseudonym_key_out %w", err)
	}
	return nil
}
