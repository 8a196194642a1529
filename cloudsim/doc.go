// Package cloudsim is a faithful, in-memory simulator of the cloud database
// management REST API (docs/api.md, both revisions). A *Sim is an
// http.Handler: it serves the API under /v1 (so the base URL is the server
// URL plus "/v1") and test controls under /_sim. It exists so that the
// exporter, its client and its dashboards can be exercised without a real
// account.
//
// The controls under /_sim need no authentication and can change any state,
// so a server built on a Sim must only listen on loopback.
//
// # Choices the spec leaves open
//
// The spec documents resources, operations and status values but not the
// transitions, conflicts or limits. The simulator fixes them as follows, and
// the client and the exporter must not rely on anything finer.
//
// State is computed lazily from timestamps on an injectable clock whenever it
// is read; no goroutine runs per resource. Durations come from Timings; a zero
// duration completes at once, so with zero Timings a create response already
// shows READY (services) or active (replica sets), as the spec's examples do.
//
//   - Service create and fork: QUEUED for Timings.Provision, CONFIGURING for
//     another Timings.Provision, then READY.
//   - Service resize, setHA, attachToVPC and detachFromVPC: CONFIGURING for
//     Timings.Configure, then READY. New sizes and attachments are visible at
//     once; only the status lags.
//   - Service delete: DELETING for Timings.Delete, then the service and its
//     replica sets are gone (404).
//   - Replica set create, resize and delete: creating, resizing or deleting
//     for Timings.ReplicaSet, then active (or gone after a delete).
//   - Peering create: the 201 response always says pending, as the spec
//     shows; the peering stays pending for Timings.Peering, then is active.
//   - A status forced through a control (SetServiceStatus and friends, or
//     their HTTP forms) sticks until the next successful write on that
//     resource or another control; an empty status removes the override.
//   - paused is true exactly when the visible status is PAUSED.
//
// Success answers of writes: revision 2026 answers as the addendum's table
// says (resize, setHA, start, stop and fork 202 with the service, attach,
// detach and replica set resize 202 {message}, and so on), every body
// application/json; the first revision answers as cloud-api.md's endpoint
// tables say (resize, setHA, attach and detach 202 with no body, renameVPC
// 200 with the VPC). A replica set resize takes the sizes as digit strings
// or integers; the first revision requires nodes, revision 2026 takes it
// only optionally (its body is resizeService's).
//
// Conflicts (409 CONFLICT): any service write other than delete while the
// service is DELETING (a second delete is accepted and changes nothing);
// resize, setHA, attachToVPC, detachFromVPC and forkService unless the
// service is READY or UNSTABLE (operators resize to recover from UNSTABLE;
// every other status, PAUSED included, is a transition or a state that does
// not accept changes); attaching a service that is attached to any VPC;
// detaching from a VPC the service is not attached to; deleting a VPC that
// still has peerings or attached services; any replica set write while that
// replica set is creating, resizing or deleting, or while its service is
// DELETING; creating a replica set on a service that is not READY.
//
// Validation (400 INVALID_REQUEST, the message names the field): every field
// the spec lists for a request body is required, null counts as missing, and
// JSON types are strict (an integer sent as a string is rejected, although the
// client tolerates such drift in responses). cpu_millis, memory_gbs and nodes
// are 1..2147483647, replica_count 0..5, environment PROD or DEV, addons a
// subset of time-series and ai without repeats ([] is plain Postgres), cidr a
// valid IPv4 CIDR, names 1..128 characters and not blank, other identifiers
// and region codes non-blank and at most 128 characters, passwords non-empty.
// Unknown fields are ignored, as most real APIs do; this is also why an extra
// service_type on create is tolerated. Bodies are limited to 1 MiB.
//
// Checks run in this order: authentication (401), project and read-only
// permission (403), body validation (400), lookup (404), state (409).
//
// service_type is derived from addons: any list holding time-series is
// TIMESERIESDB, ai alone is VECTOR, [] is POSTGRES. High availability is
// modelled as extra entries in resources: a service has 1 + replica_count
// resources, all with the same spec. volume_type is always the empty string,
// which the spec allows and which clients must handle.
//
// Identifiers are 10-character lowercase alphanumerics drawn from a random
// source seeded by Options.Seed, so a given seed and sequence of calls yields
// the same ids. Endpoints are <id>.<project_id>.sim.clouddb.invalid (a
// reserved, never-resolving domain) with a port in 30000..39999 drawn from the
// same source; poolers listen on the same host at port 6432. The endpoint is
// absent while a service is QUEUED. initial_password is random and appears
// only in create and fork responses; forked_from only in the fork response.
//
// Credentials: the service API takes HTTP Basic access_key:secret_key;
// GET /v1/auth/info takes Bearer <api_key> and reports the access key as the
// public_key. Each scheme is refused (401) where the other belongs. A
// credential with a ProjectID may only address that project (403 otherwise);
// an empty ProjectID may address any. A ReadOnly credential gets 403 on every
// write.
//
// Every request that reaches an operation's route is counted under its
// apiclient.Op* name, whatever its answer, so tests can prove what was (or
// was not) sent. Faults (AddFault) apply before authentication and handling.
//
// Usage series and logs (revision 2026 only; the first revision has no such
// paths and answers 404). Series names are the spec's suffixes after the
// provider prefix "cloudsim" (SeriesPrefix), plus one name the spec does not
// list (cloudsim_database_replication_lag_bytes, never given data), so that
// clients must match by suffix and skip what they do not know. Every node has
// every system and database series, labelled role (primary, replica) and
// ordinal (0 for the primary, 1 to n for the HA replicas; after a node
// replacement, POST /_sim/.../replaceNode, the first replica is the primary
// and the ordinals run from the departed one's + 1, the new node last, its
// history as deterministic as the others'); a time-series
// service runs 2 to 4 jobs (ids 1000 up) and other services 0 or 1, whose
// job series carry job_id on the primary. Values are a pure function of the
// service and the bucket's start: the daily load curve behind the inline
// metrics (10% to 60% of the size, replicas 60% of that; in the demo,
// orders-db's 2% to 8%, oversized, and search-ai's 82% to 98%, undersized),
// so CPU usage is
// near metrics.milli_cpu and below the size; memory 40% to 70% of the size;
// disk usage the inline storage; disk I/O per bucket from the load (ops are
// bytes / 8 KiB); a job runs every 1 to 3 minutes (other buckets are null)
// and some jobs fail on every run (success 0). Demo churn's resizes move the
// values with the size. Every bucket of the window is present, aligned to
// bucket_seconds: null before the service existed, until a bucket has ended
// a minute ago (the newest bucket is usually null), about one bucket in
// thirty by hash, and for the activity series of a paused or queued
// service. Validation: name, from and to required (RFC 3339), from < to,
// bucket_seconds 60 to 86400 (default 60), at most 1,440 buckets, fn refused
// (400 INVALID_REQUEST); an unknown name is 404. The POST is a read: a
// read-only credential may call it.
//
// Logs: each node generates entries from its id and the clock, 6 to 30 a
// minute by default (SetLogRate or POST /_sim/projects/{p}/services/{s}/logs
// {"rate_per_minute"} changes it), at whole seconds, now and then two with
// the same timestamp, mostly LOG, some WARNING and ERROR, rare FATAL, PANIC
// and DEBUG1; the primary also holds entries added with AddLogEntries (the
// same control's {"entries"}), at any timestamp, as late arrivals. Logs reach
// back 6 hours. Answers are newest first, 500 a page; last_cursor is set when
// older entries remain and encodes the last timestamp and how many entries at
// it were returned, so that paging is exact inside a run of equal
// timestamps. since and until are inclusive (an entry at exactly since comes
// again); severities (case-insensitive) and search (substring) are
// repeatable; node defaults to the primary (0).
package cloudsim
