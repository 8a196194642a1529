package dataplane

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// lookBack reads, for each of ids (services the first pass starts without
// a saved position), one page of the interval before its boundary: the
// entries the exporter, had it been running, would have counted in its
// last interval. How many it saw is added to the entries skipped at the
// next tick, so that their series is served at 0 first; never to the
// severity counters, which start at the boundary (no backfill).
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

// countWithin returns how many of entries are stamped from since up to,
// not including, boundary: those at the boundary are counted by the
// service's next read.
func countWithin(entries []apiclient.LogEntry, since, boundary time.Time) (n int) {
	for _, e := range entries {
		if ts := e.Timestamp.Time; !ts.Before(since) && ts.Before(boundary) {
			n++
		}
	}
	return n
}
