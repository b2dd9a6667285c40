package storage

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Scheme names of the supported stores; "" is the local filesystem.
const (
	SchemeLocal = ""
	SchemeGCS   = "gs"
	SchemeS3    = "s3"
	SchemeMem   = "memfs"
)

// Scheme returns the scheme of uri ("gs" for gs://b/o), "" for a local path.
func Scheme(uri string) string {
	if i := strings.Index(uri, "://"); i > 0 {
		return uri[:i]
	}
	return SchemeLocal
}

// IsLocal reports whether uri is a path on the local filesystem.
func IsLocal(uri string) bool { return Scheme(uri) == SchemeLocal }

// Join joins a directory or prefix and a name with the separator of its
// store.
func Join(dir string, elem ...string) string {
	if IsLocal(dir) {
		return filepath.Join(append([]string{dir}, elem...)...)
	}
	out := strings.TrimSuffix(dir, "/")
	for _, e := range elem {
		out += "/" + strings.Trim(e, "/")
	}
	return out
}

// Split splits uri into its parent directory (or prefix) and last element.
func Split(uri string) (dir, base string) {
	if IsLocal(uri) {
		return filepath.Dir(uri), filepath.Base(uri)
	}
	s := Scheme(uri)
	rest := strings.TrimSuffix(strings.TrimPrefix(uri, s+"://"), "/")
	d, b := path.Split(rest)
	return s + "://" + strings.TrimSuffix(d, "/"), b
}

// Clean normalizes uri for comparisons: a cleaned local path, or a URI
// without a trailing slash.
func Clean(uri string) string {
	if IsLocal(uri) {
		return filepath.Clean(uri)
	}
	return strings.TrimSuffix(uri, "/")
}

// bucketKey splits gs://bucket/key or s3://bucket/key.
func bucketKey(uri string) (bucket, key string, err error) {
	s := Scheme(uri)
	rest := strings.TrimPrefix(uri, s+"://")
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", &Error{URI: uri, Err: fmt.Errorf("no bucket in the URI")}
	}
	return bucket, key, nil
}

// HasGlob reports whether p holds glob metacharacters.
func HasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }
