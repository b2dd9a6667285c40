package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// SuccessName is the manifest a publish writes last into a release
// directory; a directory without it is not a release.
const SuccessName = "_SUCCESS"

// ManifestVersion is the format version written into manifests. Version
// 1 (no checksums, no key fingerprint, shards named part-NNNNN-of-NNNNN)
// is still read.
const ManifestVersion = 2

// ErrNotRelease marks a release directory without its manifest: an
// interrupted publish, never to be read as a release.
var ErrNotRelease = errors.New("not a published release: no " + SuccessName)

// Manifest is the JSON content of a release's _SUCCESS.
type Manifest struct {
	// Version is the manifest format, ManifestVersion.
	Version int `json:"version"`
	// RunID names the run that published the release.
	RunID string `json:"run_id"`
	// Shards are the release's files, sorted by name.
	Shards []Shard `json:"shards"`
	// TotalRows is the sum of the shards' rows.
	TotalRows int64 `json:"total_rows"`
	// InputRows is the rows of the input files the release was made
	// from, from their footers (in long form, the user–feature pairs).
	// 0 when unknown (manifests written before it was recorded).
	InputRows int64 `json:"input_rows,omitempty"`
	// ReportSHA256 is the hex SHA-256 of the run report (protojson) the
	// publish judged the release by.
	ReportSHA256 string `json:"report_sha256"`
	// UserIDs is how the release names its users: "pseudonym" or "keep".
	// Version 2.
	UserIDs string `json:"user_ids,omitempty"`
	// KeyFingerprint identifies the pseudonym key (pseudonym.Key.
	// Fingerprint; never the key): two releases with one fingerprint join
	// by id. Empty for kept ids. Version 2.
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
}

// Shard is one file of a release.
type Shard struct {
	Name string `json:"name"` // base name inside the release directory
	Size int64  `json:"size"` // bytes
	Rows int64  `json:"rows"`
	// CRC32C is the Castagnoli CRC-32 of the shard's bytes, computed
	// while it was written. Version 2; nil in version 1.
	CRC32C *uint32 `json:"crc32c,omitempty"`
}

// ReadManifest reads dir/_SUCCESS. A missing manifest is an *Error
// matching ErrNotRelease and ErrNotExist.
func ReadManifest(ctx context.Context, dir string) (*Manifest, error) {
	uri := Join(dir, SuccessName)
	b, err := ReadFile(ctx, uri)
	if errors.Is(err, ErrNotExist) {
		return nil, &Error{URI: Clean(dir), Err: notRelease{}}
	}
	if err != nil {
		return nil, wrap(uri, err)
	}
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, &Error{URI: uri, Err: fmt.Errorf("bad manifest: %v", err)}
	}
	if m.Version < 1 || m.Version > ManifestVersion || m.RunID == "" {
		return nil, &Error{URI: uri, Err: fmt.Errorf("bad manifest: version %d, run id %q", m.Version, m.RunID)}
	}
	return m, nil
}

// notRelease matches both ErrNotRelease and ErrNotExist.
type notRelease struct{}

func (notRelease) Error() string { return ErrNotRelease.Error() }
func (notRelease) Is(target error) bool {
	return target == ErrNotRelease || target == ErrNotExist
}

// WriteManifest writes dir/_SUCCESS atomically.
func WriteManifest(ctx context.Context, dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(ctx, Join(dir, SuccessName), append(b, '\n'))
}
