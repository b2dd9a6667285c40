package matrix

import (
	"slices"

	"github.com/parquet-go/parquet-go"
)

// metadataOptions turns md into writer options in key order, so equal maps
// give equal files.
func metadataOptions(md map[string]string) []parquet.WriterOption {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	opts := make([]parquet.WriterOption, len(keys))
	for i, k := range keys {
		opts[i] = parquet.KeyValueMetadata(k, md[k])
	}
	return opts
}

// Metadata returns the value of key in the file's key/value metadata.
func (pf *File) Metadata(key string) (string, bool) { return pf.pf.Lookup(key) }

// FilesMetadata returns the values key has in the files of the input spec
// (as ListFiles lists them and OpenInput opens them: a release is
// refused; see Release for its metadata), mapped to the files that carry
// each; files without the key are listed under "".
func FilesMetadata(spec, key string) (map[string][]string, error) {
	files, err := ListFiles(spec)
	if err != nil {
		return nil, err
	}
	values := map[string][]string{}
	for _, path := range files {
		f, err := OpenInput(path)
		if err != nil {
			return nil, err
		}
		v, _ := f.Metadata(key)
		f.Close()
		values[v] = append(values[v], path)
	}
	return values, nil
}

// Parquet key/value metadata that marks a release's files (every shard of
// a directory release, and a single-file release): readers of inputs
// refuse a file carrying MetaRelease, so a release is never anonymized
// again as if it were input.
const (
	// MetaRelease is the release format version, "1".
	MetaRelease = "smoothanon.release"
	// MetaKeyFingerprint is the pseudonym key's fingerprint
	// (pseudonym.Key.Fingerprint), on pseudonymized releases only.
	MetaKeyFingerprint = "smoothanon.key_fingerprint"
	// ReleaseFormat is the value of MetaRelease.
	ReleaseFormat = "1"
	// MetaUserIDs is how a release names its users, "pseudonym" (the
	// value of pseudonym.Pseudonymize.String()); files of releases with
	// kept ids carry no value. pseudonym.MetadataKey is this key.
	MetaUserIDs = "smoothanon.user_ids"
	// MetaSensitive is the sensitive rule the release was made under
	// (sensitive.Record: the list's hash, sensitive_k and the policy);
	// releases made without a list carry none.
	MetaSensitive = "smoothanon.sensitive"
)
