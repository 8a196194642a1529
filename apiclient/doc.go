// Package apiclient is a typed client for the cloud database REST API of docs/api.md (both revisions).
//
// Every operation is one catalog entry (ops.go). Reads are retried with backoff and full jitter,
// writes only on 429. Decoding is tolerant: a value that does not decode costs only itself.
package apiclient
