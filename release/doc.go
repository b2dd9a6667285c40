// Package release publishes a release directory atomically, on a local
// disk or an object store, and guards releases from being clobbered.
//
// The protocol: shards are written under a staging directory; Publish
// moves them to the output (a rename on a local disk, a server-side copy
// on an object store, which has no rename) and writes the _SUCCESS
// manifest (storage.Manifest) last. Readers refuse a directory of shards
// without it (storage.Expand), so an interrupted publish is never read as
// a release. A publish of a run id the output's manifest already carries
// is a no-op, so a retried run succeeds without writing anything.
package release
