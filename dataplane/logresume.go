package dataplane

import (
	"slices"
	"strconv"
	"time"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// resumeCursor moves a boundary older than MaxLogResume before until up to
// it, and returns the span never read in skipped.
func resumeCursor(id string, sc savedCursor, until time.Time, window time.Duration) (c *logCursor, skipped time.Duration) {
	from := until.Add(-MaxLogResume)
	boundary := sc.Boundary.UTC()
	switch {
	case boundary.After(until):
		// Saved with a clock ahead: the entries to come must not wait for it.
		boundary = until
	case boundary.Before(from):
		boundary = from
		skipped = max(from.Sub(sc.ReadUntil), 0)
	}
	c = newLogCursor(id, boundary, window)
	for sev, n := range sc.Counts {
		c.counts.Set(severityIndex(sev), n) // checked when read
	}
	if boundary.Equal(sc.Boundary) {
		for k, n := range sc.AtBoundary {
			key, _ := strconv.ParseUint(k, 16, 64) // checked when read
			for range n {
				c.recent = append(c.recent, at(c.boundary, foldKey(key)))
			}
		}
		slices.SortFunc(c.recent, compareEntries)
	}
	c.readUntil = minTime(maxTime(sc.ReadUntil, boundary), until).UnixNano()
	return c, skipped
}

func (c *logCursor) saved() savedCursor {
	sc := savedCursor{Boundary: unixTime(c.boundary), ReadUntil: unixTime(c.readUntil), AtBoundary: map[string]int{}, Counts: map[string]float64{}}
	for i, sev := range fleet.LogSeverities {
		if n, ok := c.counts.Count(i); ok {
			sc.Counts[sev] = n
		}
	}
	for _, k := range c.recent {
		if k.ts() == c.boundary {
			sc.AtBoundary[strconv.FormatUint(uint64(k.key), 16)]++
		}
	}
	return sc
}

func (l *logsReader) savePositions() {
	if l.opts.Positions == nil {
		return
	}
	services := make(map[string]savedCursor, len(l.cursors))
	for id, c := range l.cursors {
		services[id] = c.saved()
	}
	l.opts.Positions.save(l.host.ProjectID(), l.opts.APIURL, services)
}

// startCursor: a resumed service is read at once, a new one from the next pass.
func (l *logsReader) startCursor(id string, until time.Time) (resumed bool) {
	sc, ok := l.resume[id]
	if !ok {
		l.cursors[id] = newLogCursor(id, until, l.cfg.Interval)
		return false
	}
	c, skipped := resumeCursor(id, sc, until, l.cfg.Interval)
	l.cursors[id] = c
	l.skipped = max(l.skipped, skipped)
	return true
}

func (l *logsReader) endResume() {
	if l.skipped > 0 {
		l.skippedSecsPending += l.skipped.Seconds()
		l.logger.Warn("The log state file's positions are older than the resume bound: the entries of the span before it are not counted",
			"skipped", l.skipped.Round(time.Second), "resume_bound", MaxLogResume)
	}
	l.resume, l.skipped = nil, 0
}
