package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// shardPattern matches the file names of a release's shards: shard i of
// n, part-NNNNN-of-NNNNN.parquet, with the publishing run's token of 12
// lowercase hex digits before the extension in the releases that carry
// one (part-NNNNN-of-NNNNN-0123456789ab.parquet).
var shardPattern = regexp.MustCompile(`^part-\d{5}-of-\d{5}(-[0-9a-f]{12})?\.parquet$`)

// IsShardName reports whether name, a base name, is the name of a
// release's shard: part-NNNNN-of-NNNNN.parquet or
// part-NNNNN-of-NNNNN-<12 lowercase hex digits>.parquet.
func IsShardName(name string) bool { return shardPattern.MatchString(name) }

// Expand turns an input spec into a sorted list of files: the spec is a
// file, a directory (its files ending in ext), a glob, or several of these
// separated by commas; it is an error for it to match nothing. A directory
// holding release shards (IsShardName) must hold the _SUCCESS manifest of
// a finished publish, and every shard it lists. A local path must be a
// regular file or a directory: a named pipe, socket or device is refused
// (reading one would block or never end).
func Expand(ctx context.Context, spec, ext string) ([]string, error) {
	var files []string
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		got, err := expandPart(ctx, part, ext)
		if err != nil {
			return nil, err
		}
		files = append(files, got...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%q: no input files", spec)
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

func expandPart(ctx context.Context, part, ext string) ([]string, error) {
	if IsLocal(part) {
		return expandLocal(ctx, part, ext)
	}
	if HasGlob(part) {
		m, err := List(ctx, part)
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no such file", part)
		}
		return m, nil
	}
	_, serr := Size(ctx, part)
	if serr == nil {
		return []string{part}, nil
	}
	if !errors.Is(serr, ErrNotExist) {
		return nil, serr
	}
	// Not an object: a directory if objects lie below it.
	dir := Clean(part)
	inner, err := List(ctx, dir+"/*"+ext)
	if err != nil {
		return nil, at(part, err)
	}
	if len(inner) == 0 {
		if any, _ := List(ctx, dir+"/*"); len(any) > 0 {
			return nil, fmt.Errorf("%s: directory holds no *%s files", part, ext)
		}
		return nil, serr
	}
	return releaseFiles(ctx, dir, inner)
}

// expandLocal is expandPart on the local filesystem, with the os
// package's messages.
func expandLocal(ctx context.Context, part, ext string) ([]string, error) {
	matches, err := List(ctx, part)
	if err != nil {
		return nil, fmt.Errorf("%s: bad glob: %v", part, err)
	}
	if len(matches) == 0 {
		if _, err := os.Stat(part); err != nil {
			return nil, fmt.Errorf("%s: no such file", part)
		}
		matches = []string{part}
	}
	var files []string
	for _, p := range matches {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if !st.IsDir() {
			if !st.Mode().IsRegular() {
				return nil, fmt.Errorf("%s: %w", p, errNotRegular(st.Mode()))
			}
			files = append(files, p)
			continue
		}
		inner, err := List(ctx, Join(p, "*"+ext))
		if err != nil {
			return nil, err
		}
		if len(inner) == 0 {
			return nil, fmt.Errorf("%s: directory holds no *%s files", p, ext)
		}
		inner, err = releaseFiles(ctx, p, inner)
		if err != nil {
			return nil, err
		}
		for _, f := range inner {
			st, err := os.Stat(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", f, err)
			}
			if !st.Mode().IsRegular() {
				return nil, fmt.Errorf("%s: %w", f, errNotRegular(st.Mode()))
			}
		}
		files = append(files, inner...)
	}
	return files, nil
}

// releaseFiles checks a directory's listing: shards need a manifest, and
// the manifest's shards must all be there; they are the directory's files
// (a stray file beside them is not part of the release).
func releaseFiles(ctx context.Context, dir string, listed []string) ([]string, error) {
	bases := map[string]string{}
	shards := false
	for _, f := range listed {
		_, base := Split(f)
		bases[base] = f
		shards = shards || shardPattern.MatchString(base)
	}
	if !shards {
		return listed, nil
	}
	m, err := ReadManifest(ctx, dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, s := range m.Shards {
		f, ok := bases[s.Name]
		if !ok {
			return nil, &Error{URI: Join(dir, s.Name), Err: fmt.Errorf("shard listed in %s is missing", SuccessName)}
		}
		files = append(files, f)
	}
	return files, nil
}
