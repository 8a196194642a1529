package dataplane

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

func init() {
	register(reader{fleet.PartLogs,
		func(c config.Collect) (bool, time.Duration) { return c.Logs.Enabled, c.Logs.Interval },
		func(r *runner, client any) func(context.Context) {
			if lc, ok := client.(LogsClient); ok {
				return newLogsReader(r, lc).tick
			}
			return nil
		}})
}

// LogsClient is the part of *apiclient.Client the log collector uses.
type LogsClient interface {
	GetServiceLogs(ctx context.Context, serviceID string, q apiclient.LogsQuery) (*apiclient.LogPage, error)
}

// logsPublishEvery is how often a pass of log reads publishes the counts
// that have arrived while its reads go on.
const logsPublishEvery = 5 * time.Second

// logsReader is the log collector of one project. Only its goroutine
// touches its fields.
type logsReader struct {
	*runner
	client LogsClient
	cfg    config.Logs
	sel    serviceSelector

	cursors   map[string]*logCursor
	truncated float64
	// late counts the entries counted after a read had passed their
	// timestamp.
	late float64
	// resume holds the saved positions until the first pass has used
	// them; skipped is the longest span it could not read, and
	// skippedSeconds counts them, from the tick after (skippedSecsPending),
	// so that the series is served at 0 first.
	resume             map[string]savedCursor
	skipped            time.Duration
	skippedSeconds     float64
	skippedSecsPending float64
	// started is set once the first pass has started its cursors: only
	// then are the services without a saved position looked back at (see
	// lookBack), and skippedPending holds what that saw until the next
	// tick adds it to skippedEntries.
	started        bool
	skippedPending float64
	skippedEntries float64
	warned         map[string]bool // services whose truncation was logged
	// warnedLoop is set once a repeated page was logged.
	warnedLoop bool
	// warnedUntimed is set once entries without a timestamp were logged.
	warnedUntimed bool
	// warnedOversized is set once a skipped read was logged.
	warnedOversized bool
	// warnedBudget is set while the budget does not cover the reads.
	warnedBudget bool

	unsupportedUntil time.Time
	lastOK           time.Time
	// published is how many counts the last publish held (logCounts).
	published int
}

func newLogsReader(r *runner, client LogsClient) *logsReader {
	cfg := r.opts.Logs
	l := &logsReader{
		runner: r, client: client, cfg: cfg, sel: newServiceSelector(cfg.Environments, cfg.NameMatcher()),
		cursors: map[string]*logCursor{}, warned: map[string]bool{},
	}
	if r.opts.Positions != nil {
		l.resume = r.opts.Positions.resume(r.host.ProjectID(), r.opts.APIURL)
	} else {
		r.logger.Info("Log counting starts now: entries written before, while the exporter was not running, are not counted; those of the last interval are counted apart, as a lower bound",
			"counted_in", "clouddb_exporter_log_entries_skipped_total", "resume_with", "--collect.logs.state-file")
	}
	return l
}

// tick reads every selected service's new entries: it forgets the
// services no longer selected, paces the reads at what the state calls
// leave, reads and counts, turns the collector off for a project whose
// API has no logs, warns, and publishes.
func (l *logsReader) tick(ctx context.Context) {
	now := l.now()
	services := l.sel.selected(l.host.Snapshot())
	l.prune(services)
	for _, c := range l.cursors {
		c.settle()
	}
	l.skippedEntries += l.skippedPending
	l.skippedSeconds += l.skippedSecsPending
	l.skippedPending, l.skippedSecsPending = 0, 0
	if now.Before(l.unsupportedUntil) {
		l.publishLogs(now, now, 0)
		return
	}
	l.setBudget(len(services))
	until := now.Add(-l.cfg.Delay).UTC()
	pass := &logsPass{lastPublished: now}
	reads, lookBacks := l.startCursors(services, until)
	l.endResume()
	l.lookBack(ctx, lookBacks, pass)
	l.readAll(ctx, reads, until, pass)
	if l.offWhenUnsupported(now, pass) {
		return
	}
	l.warnReads(pass)
	l.savePositions()
	l.publishLogs(now, l.now(), pass.failures)
}

// logsPass is what one pass of reads found, for the warnings and the
// health at its end. The reads run in parallel: mu guards it, and the
// runner's counts the reads change.
type logsPass struct {
	mu            sync.Mutex
	failures      int
	notFound      int
	answered      int
	untimed       int
	truncations   []string
	loops         []string
	oversized     []string
	lastPublished time.Time
}

// prune forgets the services that are no longer selected, so that their
// counts stop being exported and a service selected again is warned about
// again.
func (l *logsReader) prune(services []string) {
	keep := map[string]bool{}
	for _, id := range services {
		keep[id] = true
	}
	for id := range l.cursors {
		if !keep[id] {
			delete(l.cursors, id)
			delete(l.warned, id)
		}
	}
}

// startCursors gives the services seen for the first time a cursor (see
// startCursor), and returns those to read, and those of the first pass to
// look back at. There is no backfill: a service's counting starts when it
// is first seen, its series at 0, unless it resumes from the state file.
// The new cursors are made before the reads start because the reads
// publish from l.cursors as they go.
func (l *logsReader) startCursors(services []string, until time.Time) (reads, lookBacks []string) {
	for _, id := range services {
		switch {
		case l.cursors[id] != nil || l.startCursor(id, until):
			reads = append(reads, id)
		case !l.started:
			// A service first seen later was not lost by a restart.
			lookBacks = append(lookBacks, id)
		}
	}
	l.started = true
	return reads, lookBacks
}

// readAll reads the services' entries up to until, as many at once as the
// concurrency allows, and counts each read as it returns.
func (l *logsReader) readAll(ctx context.Context, reads []string, until time.Time, pass *logsPass) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(l.opts.Concurrency, 1))
	for _, id := range reads {
		c := l.cursors[id]
		g.Go(func() error {
			entries, truncated, looping, err := l.read(gctx, id, c.lateFrom, c.boundary, until, l.cfg.MaxPages)
			pass.mu.Lock()
			defer pass.mu.Unlock()
			l.apply(pass, id, c, until, entries, truncated, looping, err)
			return nil
		})
	}
	_ = g.Wait()
}

// apply counts what one read of service id returned into its cursor c and
// the pass, with pass.mu held.
func (l *logsReader) apply(pass *logsPass, id string, c *logCursor, until time.Time, entries []apiclient.LogEntry, truncated, looping bool, err error) {
	switch {
	case apiclient.IsNotFound(err):
		pass.notFound++
	case errors.Is(err, apiclient.ErrValueTooLarge):
		// The same read would fail so for good: skip its interval rather
		// than stop counting the service.
		pass.failures++
		c.skip(until)
		l.truncated++
		pass.oversized = append(pass.oversized, id)
	case err != nil:
		pass.failures++
		// In an outage the pass can last hours (each read waits out its
		// timeout and retries): flag the part at its first failure, the
		// counts kept.
		if pass.failures == 1 {
			l.flag(l.fill())
		}
	default:
		pass.answered++
		untimed, late := c.count(entries, until, truncated)
		pass.untimed += untimed
		l.late += float64(late)
		switch {
		case looping:
			l.truncated++
			pass.loops = append(pass.loops, id)
		case truncated:
			l.truncated++
			pass.truncations = append(pass.truncations, id)
		}
		l.publishSoon(pass)
	}
}

// publishSoon publishes the counts every logsPublishEvery while the reads
// go on: they are paced over the interval, or longer, and the counts
// should not wait for the slowest. The part's health waits for the end of
// the pass.
func (l *logsReader) publishSoon(pass *logsPass) {
	if now := l.now(); now.Sub(pass.lastPublished) >= logsPublishEvery {
		pass.lastPublished = now
		l.publishData(l.fill())
	}
}

// offWhenUnsupported tells whether the pass found that the project's API has no
// service logs (only 404s, and no answer within availableSeriesTTL): then
// it turns the collector off for that long, drops the counts, publishes
// and returns true. An answer after that turns it on again.
func (l *logsReader) offWhenUnsupported(now time.Time, pass *logsPass) (off bool) {
	if pass.answered > 0 {
		l.lastOK = now
	}
	if pass.notFound > 0 && pass.answered == 0 && now.Sub(l.lastOK) > availableSeriesTTL {
		if l.unsupportedUntil.IsZero() {
			l.logger.Warn("The API has no service logs for this project (404); the log collector is off for it and asks again hourly",
				"retry_in", availableSeriesTTL)
		}
		l.unsupportedUntil = now.Add(availableSeriesTTL)
		l.cursors = map[string]*logCursor{}
		l.savePositions()
		l.publishLogs(now, l.now(), 0)
		return true
	}
	if pass.answered > 0 && !l.unsupportedUntil.IsZero() {
		l.logger.Info("The API has service logs for this project again")
		l.unsupportedUntil = time.Time{}
	}
	return false
}

// warnReads logs, once per run, each kind of read that could not count
// every entry: the counts are lower than the truth, and the log says why
// and what to change. Once per run (per service for truncation), so that
// a provider that keeps doing it does not flood the log.
func (l *logsReader) warnReads(pass *logsPass) {
	if pass.untimed > 0 && !l.warnedUntimed {
		l.warnedUntimed = true
		l.logger.Warn("The API sent log entries without a readable timestamp; they cannot be placed against the entries counted before and are not counted",
			"entries", pass.untimed)
	}
	slices.Sort(pass.oversized)
	if len(pass.oversized) > 0 && !l.warnedOversized {
		l.warnedOversized = true
		l.logger.Warn("A log page held an entry over the bound of one answer value; the entries of that read's interval are skipped, not counted, so that counting goes on",
			"services", len(pass.oversized), "service_id", pass.oversized[0],
			"fix", "raise --api.max-value-size (clouddb_exporter_log_pages_truncated_total counts each skipped read)")
	}
	slices.Sort(pass.loops)
	if len(pass.loops) > 0 && !l.warnedLoop {
		l.warnedLoop = true
		l.logger.Warn("The API sent a log page again (its cursor repeats, or it ignores the cursor); each such read counts its first pages only and stops",
			"services", len(pass.loops), "service_id", pass.loops[0],
			"counted_as", "clouddb_exporter_log_pages_truncated_total")
	}
	l.warnTruncated(pass.truncations)
}

// warnTruncated logs one line for the services over the page cap for the
// first time, however many: an incident across the fleet must not flood
// the log.
func (l *logsReader) warnTruncated(truncations []string) {
	slices.Sort(truncations)
	var first []string
	for _, id := range truncations {
		if !l.warned[id] {
			l.warned[id] = true
			first = append(first, id)
		}
	}
	if len(first) > 0 {
		l.logger.Warn("Services wrote more log entries in one interval than the page cap reads; the older ones of the interval are not counted",
			"services", len(first), "service_id", first[0], "max_pages", l.cfg.MaxPages, "page_size", apiclient.LogsPageSize, "interval", l.cfg.Interval,
			"fix", "raise --collect.logs.max-pages or lower --collect.logs.interval (clouddb_exporter_log_pages_truncated_total counts each time)")
	}
}

// read pages through a service's entries from since (inclusive, as the API
// may send them) to until, newest first, up to maxPages pages. Since
// reaches back before the boundary for late entries, at no cost in calls:
// the read stops at the first page that reaches below the boundary.
// truncated tells that older entries remained; looping that the API sent
// a page again (a cursor it had sent before, or entries newer than those
// of the page before: it ignores the cursor), which is not counted and
// ends the read as a truncated one.
func (l *logsReader) read(ctx context.Context, id string, since, boundary, until time.Time, maxPages int) (entries []apiclient.LogEntry, truncated, looping bool, err error) {
	q := apiclient.LogsQuery{Since: since, Until: until}
	sent := map[string]bool{}
	var oldest time.Time
	for range maxPages {
		if !l.pace(ctx) {
			return nil, false, false, ctx.Err()
		}
		page, err := l.client.GetServiceLogs(ctx, id, q)
		if err != nil {
			return nil, false, false, err
		}
		if len(page.Entries) == 0 {
			return entries, false, false, nil
		}
		if sent[page.LastCursor] || !oldest.IsZero() && newestOf(page.Entries).After(oldest) {
			return entries, true, true, nil
		}
		entries = append(entries, page.Entries...)
		for _, e := range page.Entries {
			if ts := e.Timestamp.Time; !ts.IsZero() && (oldest.IsZero() || ts.Before(oldest)) {
				oldest = ts
			}
		}
		if page.LastCursor == "" || oldest.Before(boundary) {
			return entries, false, false, nil
		}
		sent[page.LastCursor] = true
		q.Cursor = page.LastCursor
	}
	return entries, true, false, nil
}

// setBudget sets the calls' rate to what the state calls leave of the budget,
// and says when that does not read every one of reads services once per
// log interval.
func (l *logsReader) setBudget(reads int) {
	if !l.budgeted() {
		l.limiter = nil
		return
	}
	left := max(l.leftRate(), l.opts.RateLimit*(1-budgetShare))
	l.warnBudget(reads, left)
	if l.unpaced {
		l.limiter = nil
		return
	}
	l.setRate(rate.Limit(left))
}

// warnBudget logs once, when reading every selected service (one call
// each at least) takes longer than a log interval at the rate left, what
// it costs and what to change, and once when it fits again.
func (l *logsReader) warnBudget(reads int, left float64) {
	interval := l.cfg.Interval
	budget := int(left * interval.Seconds())
	over := reads > budget
	switch {
	case over && !l.warnedBudget:
		state := l.stateRate(true)
		rate := (state + float64(reads)/interval.Seconds()) / budgetShare
		longer := time.Duration(math.Ceil(float64(reads)/left/60)) * time.Minute
		l.logger.Warn("The API call budget left after the state calls does not read every selected service's logs once per log interval; each is read less often",
			"calls_needed", reads,
			"budget_per_interval", budget,
			"read_period", (time.Duration(float64(reads)/left) * time.Second).Round(time.Second),
			"fix", fmt.Sprintf("raise --api.rate-limit to %.1f if the provider allows it, or --collect.logs.interval to %s, or select fewer services (--collect.logs.environment, --collect.logs.service-name-regex)", rate, longer))
	case !over && l.warnedBudget:
		l.logger.Info("The API call budget covers every selected service's log read in one log interval again", "calls_needed", reads)
	}
	l.warnedBudget = over
}

// publishLogs publishes the counts with the part's health.
func (l *logsReader) publishLogs(start, end time.Time, failures int) {
	l.publish(l.fill(), start, end, failures)
}

// fill returns what puts the counts into a snapshot.
func (l *logsReader) fill() func(*fleet.Snapshot) {
	logs := l.build()
	return func(s *fleet.Snapshot) { s.SetData(fleet.PartLogs, logs) }
}

// build makes the project's logs from the counts.
func (l *logsReader) build() *fleet.Logs {
	logs := &fleet.Logs{PagesTruncated: l.truncated, Late: l.late, SkippedSeconds: l.skippedSeconds, EntriesSkipped: l.skippedEntries}
	logs.Counts = logCounts(l.cursors, l.published)
	l.published = len(logs.Counts)
	return logs
}
