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
		entries, _, _, err := l.read(ctx, id, since, boundary, boundary, 1)
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
