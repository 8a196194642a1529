// Package apiclient is a typed, careful client for the cloud database
// management REST API, as docs/api.md describes it (both revisions).
//
// A Client is bound to one project and one set of credentials. Every call
// takes a context, is rate limited by a token bucket shared by all calls of
// the Client, and is reported to an Observer under a stable operation name.
// Every operation is one entry of the catalog in ops.go (name, method, path
// template, success status, async, write), from which the Client's calls,
// the admin surface's routes and the metrics' operation names derive. Reads are retried with exponential backoff and full jitter;
// writes are retried only on 429, because the server did not process them.
//
// Decoding is deliberately tolerant, because real control planes drift:
// unknown fields are ignored, enum values are kept as plain strings, absent
// or null optional objects decode to nil, timestamps accept RFC 3339 with or
// without fractional seconds, and integers may arrive as JSON strings.
package apiclient
