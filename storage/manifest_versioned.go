package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ReadManifestVersioned is ReadManifest with the Attrs of the _SUCCESS
// read, whose Version a publish compares before replacing it.
func ReadManifestVersioned(ctx context.Context, dir string) (*Manifest, Attrs, error) {
	uri := Join(dir, SuccessName)
	b, a, err := ReadVersioned(ctx, uri)
	if errors.Is(err, ErrNotExist) {
		return nil, Attrs{}, &Error{URI: Clean(dir), Err: notRelease{}}
	}
	if err != nil {
		return nil, Attrs{}, wrap(uri, err)
	}
	m, err := ParseManifest(uri, b)
	return m, a, err
}

// ParseManifest decodes a manifest read from uri.
func ParseManifest(uri string, b []byte) (*Manifest, error) {
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, &Error{URI: uri, Err: fmt.Errorf("bad manifest: %v", err)}
	}
	if m.Version < 1 || m.Version > ManifestVersion || m.RunID == "" {
		return nil, &Error{URI: uri, Err: fmt.Errorf("bad manifest: version %d, run id %q", m.Version, m.RunID)}
	}
	if m.Shape != "" && (m.Shape != ShapeLong || m.Version < 3) {
		return nil, &Error{URI: uri, Err: fmt.Errorf("bad manifest: shape %q in version %d", m.Shape, m.Version)}
	}
	return m, nil
}
