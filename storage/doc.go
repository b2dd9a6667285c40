// Package storage is the one door every path goes through: local files,
// gs:// (Google Cloud Storage), s3:// (Amazon S3) and memfs:// (Beam's
// in-memory filesystem, for tests).
//
// Listing, whole-object writes, copies and removals go through Beam's
// filesystem registry (beam/io/filesystem), so the URIs Beam users know
// work here too. Parquet needs random access, which Beam's filesystems do
// not offer; Open returns an io.ReaderAt that reads byte ranges with the
// native clients (GCS range reads pinned to the object's generation, S3
// GetObject with a Range header pinned by ETag), so a row group is read
// without downloading its whole file.
//
// Credentials come from the clients' standard chains (Application Default
// Credentials for GCS, the AWS default chain for S3); STORAGE_EMULATOR_HOST
// and AWS_ENDPOINT_URL_S3 point them at emulators. Paths without a scheme
// are local and behave exactly as the os package does.
package storage
