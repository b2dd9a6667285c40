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
	case !errors.Is(err, storage.ErrNotRelease):
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

// listed reports whether name is a shard of the published release.
func (s dirState) listed(name string) bool {
	return s.manifest != nil && slices.ContainsFunc(s.manifest.Shards, func(sh storage.Shard) bool { return sh.Name == name })
}

// own reports whether name is a file a release or a run makes: the
// manifest, a shard it lists, a shard some run copied (token-named), or
// a temporary of an atomic write there.
func (s dirState) own(name string) bool {
	if name == storage.SuccessName || s.listed(name) {
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
	case s.manifest != nil && s.manifest.RunID == p.RunID:
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

// checkReport says whether the report may be written at path: it must not
// exist, unless overwrite, or it is the report of a run that published
// nothing (a failed night's, which its retry replaces).
func checkReport(ctx context.Context, path string, overwrite bool) error {
	if path == "" || path == "-" {
		return nil
	}
	b, err := storage.ReadFile(ctx, path)
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--metrics_out %w", err)
	}
	if overwrite || failedReport(b) {
		return nil
	}
	return fmt.Errorf("--metrics_out %s exists (pass --overwrite to replace it)", path)
}

// failedReport reports whether b is a run report saying nothing was
// published.
func failedReport(b []byte) bool {
	var r struct {
		Published *bool   `json:"published"`
		K         *int    `json:"k"`
		RunID     *string `json:"run_id"`
	}
	return json.Unmarshal(b, &r) == nil && r.Published != nil && !*r.Published && r.K != nil
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
