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
// Its times are Unix nanoseconds, 8 bytes where a time.Time takes 24: a
// cursor is one per service.
type logCursor struct {
	boundary int64
	// The reads reach back to lateFrom, at most the reader's window before
	// boundary.
	lateFrom  int64
	readUntil int64
	// recent is sorted, once an entry, with little room to spare: it is
	// kept between reads.
	recent []entryAt
	// counts is published as it is when fresh is 0; shared, it is copied
	// before it changes.
	counts *ServiceLogs
	// fresh severities, first seen since the last tick, are published at 0
	// first, so that increase() sees their first entries.
	fresh  uint16
	shared bool
}

// entryAt is 12 bytes, not 16: its timestamp in two halves keeps it
// 4-byte aligned, and its key is 32 bits. A key tells apart entries of
// one timestamp only, counted as many times as they come: two messages
// with the same key at the same nanosecond still count apart.
type entryAt struct {
	hi, lo uint32 // Unix nanoseconds
	key    uint32
}

func at(ts int64, key uint32) entryAt { return entryAt{uint32(ts >> 32), uint32(ts), key} }

func (e entryAt) ts() int64 { return int64(int32(e.hi))<<32 | int64(e.lo) }

func compareEntries(a, b entryAt) int {
	return cmp.Or(cmp.Compare(a.ts(), b.ts()), cmp.Compare(a.key, b.key))
}

func run(l []entryAt, i int, k entryAt) (n, end int) {
	end = i
	for end < len(l) && l[end] == k {
		end++
	}
	return end - i, end
}

func unixTime(ns int64) time.Time { return time.Unix(0, ns).UTC() }

func newLogCursor(id string, boundary time.Time) *logCursor {
	b := boundary.UnixNano()
	c := &logCursor{boundary: b, lateFrom: b, readUntil: b, counts: NewServiceLogs(&id)}
	for _, sev := range logSeverities[:7] {
		c.counts.Set(severityIndex(sev), 0)
	}
	return c
}

func (c *logCursor) settle() { c.fresh = 0 }

func (c *logCursor) add(sev string) {
	i := severityIndex(sev)
	if c.shared {
		c.counts, c.shared = c.counts.Clone(), false
	}
	n, ok := c.counts.Count(i)
	if !ok {
		c.fresh |= 1 << i
	}
	c.counts.Set(i, n+1)
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

// readEntry is an entry taken from a read, 16 bytes: its severity is
// entries[i]'s, looked up only when it is counted.
type readEntry struct {
	k entryAt
	i uint32
}

// logCounting is what the cursors of a reader share: the window of late
// entries they keep, and the buffers of count, kept from read to read.
type logCounting struct {
	window time.Duration
	read   []readEntry
	merge  []entryAt
}

// count returns the late entries. It skips those without a timestamp or
// before lateFrom (not told from ones counted before: outside, the read
// asked from lateFrom on) and after until (they would move the boundary
// past every entry to come).
func (c *logCursor) count(entries []apiclient.LogEntry, until time.Time, truncated bool, with *logCounting) (untimed, late, outside int) {
	read, untimed, outside := c.timed(with.read[:0], entries, until)
	with.read = read[:0]
	oldest := until.UnixNano()
	if len(read) > 0 {
		oldest = read[0].k.ts()
	}
	merged, newest, late := c.merge(read, entries, with.merge[:0])
	with.merge = merged[:0]
	c.boundary, c.readUntil = newest, until.UnixNano()
	if truncated && oldest > c.lateFrom {
		// The oldest timestamp read may have had more entries than read.
		c.lateFrom = oldest + 1
	}
	c.keep(merged, with.window)
	return untimed, late, outside
}

// timed appends to read the entries to count, sorted. It compares times
// before taking their Unix ns: those of a time far off would wrap.
func (c *logCursor) timed(read []readEntry, entries []apiclient.LogEntry, until time.Time) (_ []readEntry, untimed, outside int) {
	lateFrom := unixTime(c.lateFrom)
	for i, e := range entries {
		switch ts := e.Timestamp.Time; {
		case ts.IsZero():
			untimed++
		case ts.Before(lateFrom):
			outside++
		case !ts.After(until):
			read = append(read, readEntry{at(ts.UnixNano(), entryKey(e)), uint32(i)})
		}
	}
	slices.SortFunc(read, func(a, b readEntry) int { return compareEntries(a.k, b.k) })
	return read, untimed, outside
}

// merge counts the entries read that recent does not hold yet, and
// returns recent with them in merged.
func (c *logCursor) merge(read []readEntry, entries []apiclient.LogEntry, merged []entryAt) (_ []entryAt, newest int64, late int) {
	newest = c.boundary
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
			c.add(severityOf(entries[read[i].i].Severity))
			if k.ts() < c.boundary {
				late++
			}
		}
		for range max(n, known) {
			merged = append(merged, k)
		}
		if ts := k.ts(); n > known && ts > newest {
			newest = ts
		}
	}
	return append(merged, c.recent[r:]...), newest, late
}

// keep makes recent the entries of merged from lateFrom on, in recent's
// own array when it fits them with less than a quarter to spare.
func (c *logCursor) keep(merged []entryAt, window time.Duration) {
	c.lateFrom = max(c.lateFrom, c.boundary-int64(window))
	i, _ := slices.BinarySearchFunc(merged, c.lateFrom, func(e entryAt, ts int64) int { return cmp.Compare(e.ts(), ts) })
	kept := merged[i:]
	switch n := len(kept); {
	case n == 0:
		c.recent = nil
	case n <= cap(c.recent) && cap(c.recent)-n <= n/4:
		c.recent = c.recent[:n]
	default:
		c.recent = make([]entryAt, n)
	}
	copy(c.recent, kept)
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
	u := until.UnixNano()
	c.boundary, c.lateFrom, c.readUntil = u, u, u
	c.recent = nil
}

// entryKey hashes the message: messages are never kept.
func entryKey(e apiclient.LogEntry) uint32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(e.Severity))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(e.Message))
	return foldKey(h.Sum64())
}

// foldKey also reads the 64-bit keys of state files written before the
// keys were 32 bits: a 32-bit key folds to itself.
func foldKey(k uint64) uint32 { return uint32(k ^ k>>32) }
