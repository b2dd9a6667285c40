package storage

import (
	"context"
	"encoding/json"
	"errors"
)

// SuccessName is the manifest a publish writes last into a release
// directory; a directory without it is not a release.
const SuccessName = "_SUCCESS"

// ManifestVersion is the newest manifest format, the one written for a
// release in long form (shape and users recorded). A release in list
// form is written as version 2, which readers of version 2 still take;
// version 1 (no checksums, no key fingerprint, shards named
// part-NNNNN-of-NNNNN) is still read. A reader older than a version
// refuses the manifest rather than misreading its shards.
const ManifestVersion = 3

// ListManifestVersion is the version written for a release in list
// form.
const ListManifestVersion = 2

// ShapeLong is Manifest.Shape of a release written one row per
// (user, feature) pair.
const ShapeLong = "long"

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
	// Shape is "" for a release in list form (a row per user), or
	// ShapeLong: a row per released (user, feature) pair, each user's
	// pairs on consecutive rows of one shard, and users released without
	// features on no row at all. Version 3.
	Shape string `json:"shape,omitempty"`
	// Users is the users the release holds, those on no row included:
	// in long form the sum of the shards' users; in list form 0, as the
	// users are TotalRows. Version 3.
	Users int64 `json:"users,omitempty"`
}

// ReleasedUsers is the users the release holds: Users in long form, else
// TotalRows.
func (m *Manifest) ReleasedUsers() int64 {
	if m.Shape == ShapeLong {
		return m.Users
	}
	return m.TotalRows
}

// Shard is one file of a release.
type Shard struct {
	Name string `json:"name"` // base name inside the release directory
	Size int64  `json:"size"` // bytes
	Rows int64  `json:"rows"`
	// Users is the users of a long-form shard, those without features
	// (on no row) included; 0 in list form, where they are Rows.
	// Version 3.
	Users int64 `json:"users,omitempty"`
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
	return ParseManifest(uri, b)
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
