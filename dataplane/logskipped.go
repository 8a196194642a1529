package dataplane

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// lookBack reads a page of the interval before each boundary: it goes to
// the entries skipped, never to the severity counters (no backfill).
func (l *logsReader) lookBack(ctx context.Context, ids []string, pass *logsPass) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(l.opts.Concurrency, 1))
	for _, id := range ids {
		boundary := l.cursors[id].boundary
		g.Go(func() error {
			since := boundary.Add(-l.cfg.Interval)
			entries, _, _, err := l.read(gctx, id, since, boundary, boundary, 1)
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
			return nil
		})
	}
	_ = g.Wait()
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
