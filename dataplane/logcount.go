package dataplane

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// logSeverities start at 0 as soon as a service is seen, so that increase()
// sees the first entries; any other severity counts as OTHER.
var logSeverities = []string{
	apiclient.SeverityLog, apiclient.SeverityInfo, apiclient.SeverityNotice, apiclient.SeverityWarning,
	apiclient.SeverityError, apiclient.SeverityFatal, apiclient.SeverityPanic,
	"DEBUG1", "DEBUG2", "DEBUG3", "DEBUG4", "DEBUG5", "DEBUG",
}

// SeverityOther counts the entries whose severity is not PostgreSQL's.
const SeverityOther = "OTHER"

func severityOf(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if slices.Contains(logSeverities, s) {
		return s
	}
	return SeverityOther
}

// logCursor counts each kind of entry (timestamp, severity, message hash)
// from lateFrom up to the boundary, so that entries the API sends again
// are not counted twice and late ones are told from those counted before.
type logCursor struct {
	boundary time.Time
	// The reads reach back to lateFrom, at most window before boundary.
	lateFrom time.Time
	window   time.Duration
	// recent is sorted, once an entry: 16 bytes each, where a map took 40.
	recent    []entryAt
	readUntil time.Time
	counts    sevCounts
	// pending severities are published at 0 first, added at the next tick.
	pending sevCounts
	// service is the service's id, kept once for its published counts.
	service *string
}

type entryAt struct {
	ts  int64 // Unix nanoseconds
	key uint64
}

func compareEntries(a, b entryAt) int {
	return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.key, b.key))
}

func run(l []entryAt, i int, k entryAt) (n, end int) {
	end = i
	for end < len(l) && l[end] == k {
		end++
	}
	return end - i, end
}

func newLogCursor(boundary time.Time, window time.Duration) *logCursor {
	c := &logCursor{boundary: boundary, lateFrom: boundary, window: window, readUntil: boundary}
	for i := range 7 {
		c.counts.set(i, 0)
	}
	return c
}

func (c *logCursor) settle() {
	for i := range numSeverities {
		if c.pending.present(i) {
			c.counts.n[i] += c.pending.n[i]
		}
	}
	c.pending = sevCounts{}
}

func (c *logCursor) add(sev string) {
	i := severityIndex(sev)
	if !c.pending.present(i) && c.counts.present(i) {
		c.counts.n[i]++
		return
	}
	c.counts.set(i, 0)
	c.pending.set(i, c.pending.n[i]+1)
}

func newestOf(entries []apiclient.LogEntry) time.Time {
	var newest time.Time
	for _, e := range entries {
		if e.Timestamp.After(newest) {
			newest = e.Timestamp.Time
		}
	}
	return newest
}

// count returns the late entries. It skips those without a timestamp or
// before lateFrom (not told from ones counted before) and after until
// (they would move the boundary past every entry to come).
func (c *logCursor) count(entries []apiclient.LogEntry, until time.Time, truncated bool) (untimed, late int) {
	newest := c.boundary
	type readEntry struct {
		k   entryAt
		ts  time.Time
		sev string
	}
	read := make([]readEntry, 0, len(entries))
	oldest := until
	for _, e := range entries {
		ts := e.Timestamp.Time
		if ts.IsZero() {
			untimed++
			continue
		}
		if ts.Before(c.lateFrom) || ts.After(until) {
			continue
		}
		oldest = minTime(oldest, ts)
		read = append(read, readEntry{entryAt{ts.UnixNano(), entryKey(e)}, ts, e.Severity})
	}
	slices.SortFunc(read, func(a, b readEntry) int { return compareEntries(a.k, b.k) })
	merged := make([]entryAt, 0, len(c.recent)+len(read))
	r := 0 // into c.recent
	for i := 0; i < len(read); {
		k := read[i].k
		for ; r < len(c.recent) && compareEntries(c.recent[r], k) < 0; r++ {
			merged = append(merged, c.recent[r])
		}
		known, end := run(c.recent, r, k)
		r = end
		n := 0
		for ; i < len(read) && read[i].k == k; i++ {
			if n++; n <= known {
				continue
			}
			c.add(severityOf(read[i].sev))
			if k.ts < c.boundary.UnixNano() {
				late++
			}
		}
		for range max(n, known) {
			merged = append(merged, k)
		}
		if ts := read[i-1].ts; n > known && ts.After(newest) {
			newest = ts
		}
	}
	c.recent = append(merged, c.recent[r:]...)
	c.boundary, c.readUntil = newest, until
	if truncated && oldest.After(c.lateFrom) {
		// The oldest timestamp read may have had more entries than read.
		c.lateFrom = oldest.Add(time.Nanosecond)
	}
	c.forget()
	return untimed, late
}

func (c *logCursor) forget() {
	if from := c.boundary.Add(-c.window); from.After(c.lateFrom) {
		c.lateFrom = from
	}
	from := c.lateFrom.UnixNano()
	i, _ := slices.BinarySearchFunc(c.recent, from, func(e entryAt, ts int64) int { return cmp.Compare(e.ts, ts) })
	if i > 0 || cap(c.recent) > len(c.recent) {
		// Kept until the next read: no room to spare.
		c.recent = slices.Clone(c.recent[i:])
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (c *logCursor) skip(until time.Time) {
	c.boundary, c.lateFrom, c.readUntil = until, until, until
	c.recent = nil
}

// entryKey hashes the message: messages are never kept.
func entryKey(e apiclient.LogEntry) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(e.Severity))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(e.Message))
	return h.Sum64()
}
