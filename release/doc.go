// Package release owns a run's lifecycle — check, stage, verify, publish,
// report, key — for every command that makes a release (run, solve,
// baseline), on a local disk and on gs:// and s3:// alike.
//
// # Guarantees
//
// Begin checks a Plan before any work: every output (the release, the
// report, the key) is a literal location (no glob), distinct from the
// others, outside the input (the input is never the output, never inside
// it, and no input spec would read the release back as input), writable,
// and not holding anything the run may not replace. A directory output
// may hold only a release (replaced with Overwrite) and files runs make
// (token-named shards, temporaries); anything else is refused, with or
// without Overwrite. A single-file output is replaced only if it is a
// release. So a run deletes nothing but a release's own files and its
// own or dead runs' leftovers.
//
// Finish publishes only a release whose report is valid and that meets
// the Plan's quality Gate (*GateError otherwise), through one atomic
// claim: a directory release's manifest (_SUCCESS) is written
// with a precondition (absent, or the version of the release it
// replaces), a single file is renamed or uploaded under the same
// precondition. Of runs racing for one output exactly one publishes; the
// others publish nothing, save no key and remove what they copied
// (*LostRaceError). A published manifest lists exactly its run's shards,
// which carry the run's token in their names, so two runs' shards never
// mix. A rerun of a published run id does nothing
// (*AlreadyPublishedError).
//
// A drawn pseudonym key is saved only for a published release, at publish
// time; the report says whether the run published and why not.
//
// A run that dies leaves nothing another run trips over: its staging
// carries a lease (a flock on a local disk, an expiring object renewed by
// compare-and-swap on a bucket), its temporaries are flocked, its key
// waits under a token name, and the next run at the same outputs removes
// a dead run's leftovers — only those, never a live run's — and saves a
// pending key whose release was published.
//
// The options weighed (where to publish, how to claim, how to tell a dead
// run's leftovers) are in docs/decisions/001-release-lifecycle.md.
//
// # Threat model
//
// The operator's mistakes and a hostile co-tenant of the output's
// location: wrong or overlapping paths, concurrent runs on one output,
// kills at any point, stores that stop answering. Not covered: someone
// with write access to the output who rewrites files after publishing
// (readers check each shard's size, rows and CRC-32C against the
// manifest, which catches replaced or truncated shards but not a forged
// manifest), and clocks of hosts sharing a bucket output that disagree by
// more than the lease's lifetime.
package release
