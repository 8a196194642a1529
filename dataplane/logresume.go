package dataplane

import (
	"cmp"
	"slices"
	"time"
)

// resumeCursor moves a boundary older than MaxLogResume before until up to
// it, and returns the span never read in skipped.
func resumeCursor(id string, sc savedCursor, until time.Time) (c *logCursor, skipped time.Duration) {
	from := until.Add(-MaxLogResume)
	saved, readUntil := unixTime(sc.boundary), unixTime(sc.readUntil)
	boundary := saved
	switch {
	case boundary.After(until):
		// Saved with a clock ahead: the entries to come must not wait for it.
		boundary = until
	case boundary.Before(from):
		boundary = from
		skipped = max(from.Sub(readUntil), 0)
	}
	c = newLogCursor(id, boundary)
	for i := range numSeverities {
		if n, ok := sc.counts.Count(i); ok {
			c.counts.Set(i, n)
		}
	}
	if boundary.Equal(saved) {
		for _, k := range sc.atBoundary {
			c.recent = append(c.recent, at(c.boundary, k))
		}
	}
	c.readUntil = minTime(maxTime(readUntil, boundary), until).UnixNano()
	return c, skipped
}

func (c *logCursor) atBoundary() []entryAt {
	i, _ := slices.BinarySearchFunc(c.recent, c.boundary, func(e entryAt, ts int64) int { return cmp.Compare(e.ts(), ts) })
	end := i
	for end < len(c.recent) && c.recent[end].ts() == c.boundary {
		end++
	}
	return c.recent[i:end]
}

// saved shares the counts, which the cursor copies before counting again,
// and appends the keys at the boundary to keys.
func (c *logCursor) saved(keys []uint32) (savedCursor, []uint32) {
	c.shared = true
	sc := savedCursor{boundary: c.boundary, readUntil: c.readUntil, counts: c.counts}
	start := len(keys)
	for _, e := range c.atBoundary() {
		keys = append(keys, e.key)
	}
	if len(keys) > start {
		sc.atBoundary = keys[start:len(keys):len(keys)]
	}
	return sc, keys
}

// savePositions puts every service's keys in one array: a small one each
// was 10,000 allocations a minute.
func (l *logsReader) savePositions() {
	if l.opts.Positions == nil {
		return
	}
	n := 0
	for _, c := range l.cursors {
		n += len(c.atBoundary())
	}
	services := make(savedServices, 0, len(l.cursors))
	keys := make([]uint32, 0, n)
	for _, c := range l.cursors {
		var sc savedCursor
		sc, keys = c.saved(keys)
		services = append(services, sc)
	}
	slices.SortFunc(services, compareSaved)
	l.opts.Positions.save(l.host.ProjectID(), l.opts.APIURL, services)
}

// startCursor: a resumed service is read at once, a new one from the next pass.
func (l *logsReader) startCursor(id string, until time.Time) (resumed bool) {
	sc, ok := l.resume.find(id)
	if !ok {
		l.cursors[id] = newLogCursor(id, until)
		return false
	}
	c, skipped := resumeCursor(id, sc, until)
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
