package dataplane

import (
	"context"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// lookBack reads a page of the interval before each boundary: it goes to
// the entries skipped, never to the severity counters (no backfill).
func (l *logsReader) lookBack(ctx context.Context, ids []string, pass *logsPass) {
	inParallel(l.opts.Concurrency, ids, func(id string) {
		boundary := unixTime(l.cursors[id].boundary)
		since := boundary.Add(-l.cfg.Interval)
		entries, _, _, err := l.read(ctx, id, since, boundary, boundary, 1, nil)
		pass.mu.Lock()
		defer pass.mu.Unlock()
		switch {
		case apiclient.IsNotFound(err):
			pass.notFound++
		case err != nil:
			pass.failures++
			if pass.failures == 1 {
				l.flag(l.fill())
			}
		default:
			pass.answered++
			l.skippedPending += float64(countWithin(entries, since, boundary))
		}
	})
}

// countWithin excludes the boundary: the service's next read counts it.
func countWithin(entries []apiclient.LogEntry, since, boundary time.Time) (n int) {
	for _, e := range entries {
		if ts := e.Timestamp.Time; !ts.Before(since) && ts.Before(boundary) {
			n++
		}
	}
	return n
}

// noteOutside counts the entries the reads were sent from before their
// window (the API's clock, or its since filter, off by more than the
// skew measured): they are not counted, and saying so once is the least.
func (l *logsReader) noteOutside(n int) {
	if n == 0 {
		return
	}
	l.skewSkipped += float64(n)
	if !l.warnedSkew {
		l.warnedSkew = true
		l.logger.Warn("The API sent log entries stamped before the read's window; they are not counted",
			"entries", n, "clock_skew", clockSkew(l.host.Snapshot()),
			"counted_in", `clouddb_exporter_log_entries_skipped_total{reason="clock_skew"}`)
	}
}

// peekBeyond reads the page after a read's page cap, whose entries the
// read does not count, and returns how many it holds: a lower bound of
// what the cap left (500 when it is full: at least that many), at one call
// a read that hit the cap, as the start's look-back reads one page.
// Counting them all would cost the calls the cap is there to save.
func (l *logsReader) peekBeyond(ctx context.Context, id string, q apiclient.LogsQuery) int {
	if q.Cursor == "" || !l.pace(ctx) {
		return 0
	}
	page, err := l.client.GetServiceLogs(ctx, id, q)
	if err != nil {
		return 0
	}
	return countWithin(page.Entries, q.Since, q.Until.Add(time.Nanosecond))
}
