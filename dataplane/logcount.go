package dataplane

import (
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// logSeverities are PostgreSQL's severities, counted under their own
// name; any other is counted as OTHER. The first seven start at 0 as soon
// as a service is seen, so that increase() sees the first entries.
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

// logCursor is where one service's counting stands: the newest timestamp
// counted, and how many entries of each kind (severity and message,
// hashed) were counted at exactly that timestamp, so that entries the API
// sends again there (since is inclusive, or a later page or poll repeats
// the boundary) are neither lost nor counted twice.
type logCursor struct {
	boundary time.Time
	seen     map[uint64]int
	counts   map[string]float64
	// pending holds the entries of severities first counted since the
	// last tick: their series are published at 0 first, and the entries
	// added at the next tick (see settle), so that increase() sees them.
	pending map[string]float64
}

// newLogCursor starts counting at boundary, the usual severities at 0.
func newLogCursor(boundary time.Time) *logCursor {
	c := &logCursor{boundary: boundary, seen: map[uint64]int{}, counts: map[string]float64{}, pending: map[string]float64{}}
	for _, s := range logSeverities[:7] {
		c.counts[s] = 0
	}
	return c
}

// settle adds the pending entries, whose series have been published at 0.
func (c *logCursor) settle() {
	for s, n := range c.pending {
		c.counts[s] += n
	}
	clear(c.pending)
}

// add counts one entry of severity sev.
func (c *logCursor) add(sev string) {
	if _, ok := c.pending[sev]; !ok {
		if _, ok := c.counts[sev]; ok {
			c.counts[sev]++
			return
		}
	}
	c.counts[sev] = 0
	c.pending[sev]++
}

// newestOf returns the newest timestamp of entries (zero if none has one).
func newestOf(entries []apiclient.LogEntry) time.Time {
	var newest time.Time
	for _, e := range entries {
		if e.Timestamp.After(newest) {
			newest = e.Timestamp.Time
		}
	}
	return newest
}

// count adds the entries of one read (newest first, from since = the
// boundary, to until) to c: those newer than the boundary all, those at
// exactly the boundary only beyond what was counted there already; then
// moves the boundary to the newest entry. Entries without a timestamp, or
// older than the boundary (late, or an API that ignores since), are not
// counted: they cannot be told from ones counted before. Entries newer
// than until (an API that ignores until, or a clock far ahead) are not
// counted yet: they would move the boundary past every entry to come.
// It returns how many entries had no timestamp.
func (c *logCursor) count(entries []apiclient.LogEntry, until time.Time) (untimed int) {
	newest := c.boundary
	atBoundary := map[uint64]int{}
	for _, e := range entries {
		switch ts := e.Timestamp.Time; {
		case ts.IsZero():
			untimed++
		case ts.Before(c.boundary) || ts.After(until):
			continue
		case ts.Equal(c.boundary):
			k := entryKey(e)
			atBoundary[k]++
			if atBoundary[k] > c.seen[k] {
				c.add(severityOf(e.Severity))
			}
		default:
			c.add(severityOf(e.Severity))
			if ts.After(newest) {
				newest = ts
			}
		}
	}
	if newest.Equal(c.boundary) {
		for k, n := range atBoundary {
			c.seen[k] = max(c.seen[k], n)
		}
		return untimed
	}
	c.boundary = newest
	c.seen = map[uint64]int{}
	for _, e := range entries {
		if e.Timestamp.Equal(newest) {
			c.seen[entryKey(e)]++
		}
	}
	return untimed
}

// skip moves c past until without counting: the entries since the
// boundary cannot be read.
func (c *logCursor) skip(until time.Time) {
	c.boundary = until
	c.seen = map[uint64]int{}
}

// entryKey tells entries apart at one timestamp: the severity and the
// message, hashed (messages are never kept).
func entryKey(e apiclient.LogEntry) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(e.Severity))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(e.Message))
	return h.Sum64()
}
