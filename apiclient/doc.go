// Package apiclient is a typed client for the cloud database management REST
// API of docs/api.md (both revisions).
//
// A Client is bound to one project and one set of credentials; its calls
// share a token bucket and report to an Observer. Every operation is one
// entry of the catalog, registered from its resource's file (ops.go), from
// which the calls, the admin routes, the metrics' operation names and the
// generic tests of every read and write derive. Reads are retried with backoff and
// full jitter; writes only on 429, which the server did not process.
//
// Decoding is tolerant because control planes drift: unknown fields are
// ignored, enums kept as strings, and a value that does not decode costs
// only itself.
package apiclient
