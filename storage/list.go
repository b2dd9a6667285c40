package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Entry is a listed file or object with its attributes.
type Entry struct {
	URI   string
	Attrs Attrs
}

// List returns the sorted files or objects matching glob; * and ? do not
// match a /. On a bucket the pattern is matched (path.Match) against the
// object names listed under its literal prefix, the part before the first
// *, ? or [; a glob without these characters names one object exactly as
// written. A missing bucket is an error matching ErrNoBucket; no match is
// an empty list.
func List(ctx context.Context, glob string) ([]string, error) {
	switch Scheme(glob) {
	case SchemeLocal:
		return filepath.Glob(glob)
	case SchemeGCS, SchemeS3:
	default:
		return listBeam(ctx, glob)
	}
	bucket, pattern, err := bucketKey(glob)
	if err != nil {
		return nil, err
	}
	if HasGlob(bucket) {
		return nil, &Error{URI: glob, Err: errors.New("a glob in the bucket name")}
	}
	prefix, literal := pattern, true
	if HasGlob(pattern) {
		literal = false
		prefix = pattern[:strings.IndexAny(pattern, `*?[\`)]
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, &Error{URI: glob, Err: fmt.Errorf("bad glob: %v", err)}
		}
	}
	// Below a / in what follows the prefix nothing can match: list only
	// the prefix's own level.
	delim := !strings.Contains(pattern[len(prefix):], "/")
	var out []string
	err = listBucket(beginOp(ctx), glob, bucket, prefix, delim, false, func(key string, _ Attrs) {
		var ok bool
		if literal {
			ok = key == pattern
		} else {
			ok, _ = path.Match(pattern, key)
		}
		if ok && !isDirMarker(key) {
			out = append(out, objectURI(glob, bucket, key))
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// ListTree returns every file or object under prefix (prefix/..., at any
// depth; on memfs 16 levels deep), sorted. Local directories are walked; a
// missing one is an empty list. Directory placeholders (names ending in /)
// are no objects and are left out.
func ListTree(ctx context.Context, prefix string) ([]string, error) {
	entries, err := listTree(ctx, prefix, false)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.URI
	}
	return out, nil
}

// ListTreeAttrs is ListTree with each entry's attributes, from one listing
// on a bucket: Size, Version, Updated (the object's update time) and on
// GCS the CRC-32C; a local file's come from lstat. memfs keeps no times:
// its Updated is zero.
func ListTreeAttrs(ctx context.Context, prefix string) ([]Entry, error) {
	return listTree(ctx, prefix, true)
}

func listTree(ctx context.Context, prefix string, withAttrs bool) ([]Entry, error) {
	var out []Entry
	switch Scheme(prefix) {
	case SchemeLocal:
		err := filepath.WalkDir(prefix, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			e := Entry{URI: p}
			if withAttrs {
				info, err := d.Info()
				if errors.Is(err, os.ErrNotExist) {
					return nil // removed since the directory was read
				}
				if err != nil {
					return err
				}
				e.Attrs = localAttrs(info)
			}
			out = append(out, e)
			return nil
		})
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	case SchemeGCS, SchemeS3:
		bucket, key, err := bucketKey(prefix)
		if err != nil {
			return nil, err
		}
		err = listBucket(beginOp(ctx), prefix, bucket, treePrefix(key), false, withAttrs, func(k string, a Attrs) {
			if !isDirMarker(k) {
				out = append(out, Entry{URI: objectURI(prefix, bucket, k), Attrs: a})
			}
		})
		if err != nil {
			return nil, err
		}
	default:
		uris, err := listTreeBeam(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, u := range uris {
			e := Entry{URI: u}
			if withAttrs {
				if e.Attrs, err = Stat(ctx, u); err != nil {
					return nil, err
				}
			}
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out, nil
}

// listBucket lists the objects of a bucket whose names start with prefix,
// with the native client of uri's scheme; errors name uri.
func listBucket(ctx context.Context, uri, bucket, prefix string, delim, withAttrs bool, fn func(key string, a Attrs)) error {
	if Scheme(uri) == SchemeGCS {
		return listGCS(ctx, uri, bucket, prefix, delim, withAttrs, fn)
	}
	return listS3(ctx, uri, bucket, prefix, delim, fn)
}

// treePrefix is the name prefix of the objects under the "directory" key.
func treePrefix(key string) string {
	key = strings.TrimSuffix(key, "/")
	if key == "" {
		return ""
	}
	return key + "/"
}

// objectURI is the URI of object key in bucket, in the scheme of uri.
func objectURI(uri, bucket, key string) string {
	return Scheme(uri) + "://" + bucket + "/" + key
}

// isDirMarker reports a directory placeholder (a name ending in /), which
// consoles create and which is no file.
func isDirMarker(key string) bool { return strings.HasSuffix(key, "/") }

// maxTreeDepth bounds how deep ListTree looks below a prefix on memfs,
// which lists by glob only, one level per glob.
const maxTreeDepth = 16

func listBeam(ctx context.Context, glob string) ([]string, error) {
	fs, err := fsFor(ctx, glob)
	if err != nil {
		return nil, err
	}
	out, err := fs.List(ctx, glob)
	if err != nil {
		return nil, wrap(glob, err)
	}
	sort.Strings(out)
	return out, nil
}

func listTreeBeam(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	pattern := Clean(prefix)
	for range maxTreeDepth {
		pattern += "/*"
		m, err := listBeam(ctx, pattern)
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	return out, nil
}
