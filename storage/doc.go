// Package storage is the one door every path goes through: local files,
// gs:// (Google Cloud Storage), s3:// (Amazon S3) and memfs:// (Beam's
// in-memory filesystem, for tests).
//
// Local paths behave exactly as the os package does. Buckets are reached
// with the native clients (cloud.google.com/go/storage, aws-sdk-go-v2
// service/s3) for every operation: listing, reads (whole, and by byte
// ranges for Parquet: GCS range reads pinned to the object's generation,
// S3 GetObject with a Range header pinned by ETag), uploads, server-side
// copies and deletes. memfs goes through Beam's filesystem registry.
//
// Object names are taken exactly as written: everything after
// "bucket/" is the object name, byte for byte ('%', '#', '?', '+', '=',
// spaces and non-ASCII letters included; the clients escape it on the
// wire). Only a glob (List, and Expand, which lists) reads '*', '?' and
// '[' as patterns; CheckLiteral refuses them in outputs.
//
// Every wait for a bucket is bounded by the Timeout (SetTimeout, default
// 60 s): connecting, the answer's headers, and each stretch of a transfer
// without progress. An operation tries each request at most three times
// with a short backoff and suffers at most three unanswered requests in
// all, so against a store that refuses connections or never answers it
// fails within 3·Timeout + 10 s, with one line naming the URI that
// matches ErrTimeout. Probe asks a store once whether it answers and lets
// this process in.
//
// Credentials come from the clients' standard chains (Application Default
// Credentials for GCS, the AWS default chain for S3); STORAGE_EMULATOR_HOST
// and AWS_ENDPOINT_URL_S3 point them at emulators.
package storage
