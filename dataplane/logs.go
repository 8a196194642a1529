package dataplane

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// The log reader: its settings, its start and its metrics (logsmetrics.go) register
// from this file's init, its data type is logsdata.go's. A new reader copies the pattern.
func init() {
	on := func(p config.Project) bool { return logsKey.Of(p.Collect).Enabled }
	field := logsKey.Field
	config.AddSettings(config.Setting{Flag: "collect.logs", Key: "collect.logs.enabled", Demo: true,
		Help:  "Count each selected service's new log entries by severity (opt-in).",
		Field: field(func(s *logsSettings) any { return &s.Enabled })})
	config.AddSettings(config.Setting{Flag: "collect.logs.interval", Key: "collect.logs.interval", Default: defaultLogsInterval.String(),
		Help:  "Interval at which each service's new log entries are read (10s or more).",
		Field: field(func(s *logsSettings) any { return &s.Interval }), Check: config.IfEnabled(on, config.AtLeastDataInterval(minLogsInterval))})
	config.AddSettings(config.SelectionSettings("logs", "Count the logs of", func(c *config.Collect) *config.Selection { return &logsKey.In(c).Selection }, on)...)
	config.AddSettings(config.Setting{Flag: "collect.logs.max-pages", Key: "collect.logs.max_pages", Default: fmt.Sprint(defaultLogsMaxPages),
		Help:  "Pages of 500 log entries read per service and interval at most.",
		Field: field(func(s *logsSettings) any { return &s.MaxPages }), Check: config.IfEnabled(on, atLeastOnePage)},
		config.Setting{Flag: "collect.logs.delay", Key: "collect.logs.delay", Default: "0s",
			Help:  "How long each read waits for late log entries; counts lag by as much.",
			Field: field(func(s *logsSettings) any { return &s.Delay }), Check: config.IfEnabled(on, logsDelay)},
		config.Setting{Flag: "collect.logs.state-file",
			Help:  "Deprecated name of --state.file.",
			Field: field(func(s *logsSettings) any { return &s.StateFile })})
	register(PartLogs, "Log counts",
		func(c config.Collect) (bool, time.Duration) { s := logsKey.Of(c); return s.Enabled, s.Interval },
		func(r *runner, client LogsClient) func(context.Context) { return newLogsReader(r, client).tick })
	registerLogsMetrics()
}

// LogsClient is the part of *apiclient.Client the log collector uses.
type LogsClient interface {
	GetServiceLogs(ctx context.Context, serviceID string, q apiclient.LogsQuery) (*apiclient.LogPage, error)
}

var _ LogsClient = (*apiclient.Client)(nil)

// Defaults of the log collector's settings.
const (
	defaultLogsInterval = time.Minute
	minLogsInterval     = 10 * time.Second
	defaultLogsMaxPages = 5
	maxLogsDelay        = time.Hour
)

// logsSettings are the log collector's settings, kept in a config.Collect by logsKey.
type logsSettings struct {
	Enabled  bool
	Interval time.Duration
	config.Selection
	MaxPages int
	Delay    time.Duration
	// StateFile is a flag only: one file holds every project's positions.
	StateFile string
}

var logsKey = config.NewReaderKey[logsSettings](PartLogs)

// LogsStateFile is --collect.logs.state-file ("" for none), which main opens once for every project.
func LogsStateFile(c config.Collect) string { return logsKey.Of(c).StateFile }

func atLeastOnePage(_ config.Project, v any) []string {
	if *v.(*int) < 1 {
		return []string{" must be at least 1"}
	}
	return nil
}

func logsDelay(_ config.Project, v any) []string {
	if d := *v.(*time.Duration); d < 0 || d > maxLogsDelay {
		return []string{" must be between 0s and " + maxLogsDelay.String()}
	}
	return nil
}

const logsPublishEvery = 5 * time.Second

// logsReader: only its goroutine touches its fields.
type logsReader struct {
	*runner
	client LogsClient
	cfg    logsSettings
	sel    serviceSelector

	cursors   map[string]*logCursor
	counting  logCounting // what the cursors share, under the pass's mutex
	truncated float64
	late      float64
	// resume is used by the first pass; skippedSeconds lags skipped a tick,
	// so that its series is served at 0 first.
	resume             savedServices
	skipped            time.Duration
	skippedSeconds     float64
	skippedSecsPending float64
	// Services without a saved position are looked back at once started.
	started        bool
	skippedPending float64
	skippedEntries float64
	// skewSkipped: entries sent from before a read's window (logskipped.go).
	skewSkipped float64
	warnedSkew  bool
	// pageCapSkipped: a lower bound of what the page cap left (peekBeyond).
	pageCapSkipped  float64
	warned          map[string]bool // services whose truncation was logged
	warnedLoop      bool
	warnedUntimed   bool
	warnedOversized bool
	warnedBudget    bool
	// readPeriod is the one the budget allows; shownPeriod the one published.
	readPeriod, shownPeriod time.Duration

	unsupportedUntil time.Time
	lastOK           time.Time
}

func newLogsReader(r *runner, client LogsClient) *logsReader {
	cfg := logsKey.Of(r.opts.Collect)
	l := &logsReader{
		runner: r, client: client, cfg: cfg, sel: newServiceSelector(cfg.Environments, cfg.NameMatcher()),
		cursors: map[string]*logCursor{}, warned: map[string]bool{}, counting: logCounting{window: cfg.Interval},
	}
	if r.opts.Positions != nil {
		l.resume = r.opts.Positions.resume(r.host.ProjectID(), r.opts.APIURL)
	} else {
		r.logger.Info("Log counting starts now: entries written before, while the exporter was not running, are not counted; those of the last interval are counted apart, as a lower bound",
			"counted_in", "clouddb_exporter_log_entries_skipped_total", "resume_with", "--state.file")
	}
	return l
}

func (l *logsReader) tick(ctx context.Context) {
	now := l.now()
	snap := l.host.Snapshot()
	services := l.sel.selected(snap)
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
	l.showPeriod()
	// In the API's clock: the entries are stamped with it.
	until := now.Add(clockSkew(snap) - l.cfg.Delay).UTC()
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

// logsPass is what one pass found. The reads run in parallel: mu guards it
// and the reader's counts.
type logsPass struct {
	mu            sync.Mutex
	failures      int
	notFound      int
	answered      int
	untimed       int
	outside       int
	beyondCap     int
	truncations   []string
	loops         []string
	oversized     []string
	lastPublished time.Time
}

// prune also lets a service selected again be warned about again.
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

// startCursors makes the new cursors before the reads start, since the
// reads publish from l.cursors as they go.
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

func (l *logsReader) readAll(ctx context.Context, reads []string, until time.Time, pass *logsPass) {
	inParallel(l.opts.Concurrency, reads, func(id string) {
		c := l.cursors[id]
		if !until.After(unixTime(c.lateFrom)) {
			return // the API's clock went back past the window: nothing new yet
		}
		beyond := 0
		entries, truncated, looping, err := l.read(ctx, id, unixTime(c.lateFrom), unixTime(c.boundary), until, l.cfg.MaxPages, &beyond)
		pass.mu.Lock()
		defer pass.mu.Unlock()
		pass.beyondCap += beyond
		l.apply(pass, id, c, until, entries, truncated, looping, err)
	})
}

// apply runs with pass.mu held.
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
		// A pass can last hours in an outage: flag the part at its first failure.
		if pass.failures == 1 {
			l.flag(l.fill())
		}
	default:
		pass.answered++
		untimed, late, outside := c.count(entries, until, truncated, &l.counting)
		pass.untimed += untimed
		pass.outside += outside
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

// publishSoon: the reads are paced, and the counts need not wait for the slowest.
func (l *logsReader) publishSoon(pass *logsPass) {
	if now := l.now(); now.Sub(pass.lastPublished) >= logsPublishEvery {
		pass.lastPublished = now
		l.publishData(l.fill())
	}
}

// offWhenUnsupported: only 404s for availableSeriesTTL turn the collector off.
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

// warnReads logs each kind of undercount once a run: no flood of the log.
func (l *logsReader) warnReads(pass *logsPass) {
	l.noteOutside(pass.outside)
	l.pageCapSkipped += float64(pass.beyondCap)
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

// warnTruncated logs one line however many services: no flood of the log.
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

// read's since is inclusive and reaches back for late entries at no cost;
// looping: the API sent a page again (it ignores the cursor). At maxPages,
// with beyond not nil, it reads the next page to count in *beyond what the
// cap leaves (see peekBeyond).
func (l *logsReader) read(ctx context.Context, id string, since, boundary, until time.Time, maxPages int, beyond *int) (entries []apiclient.LogEntry, truncated, looping bool, err error) {
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
		if entries == nil {
			entries = page.Entries // most reads are one page: not copied
		} else {
			entries = append(entries, page.Entries...)
		}
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
	if beyond != nil {
		*beyond = l.peekBeyond(ctx, id, q)
	}
	return entries, true, false, nil
}

func (l *logsReader) setBudget(reads int) {
	l.readPeriod = l.cfg.Interval
	if !l.budgeted() {
		l.limiter = nil
		return
	}
	left := max(l.leftRate(), l.opts.RateLimit*(1-budgetShare))
	l.readPeriod = max(l.cfg.Interval, logsReadPeriod(reads, left))
	l.warnBudget(reads, left)
	if l.unpaced {
		l.limiter = nil
		return
	}
	l.setRate(rate.Limit(left))
}

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
			"read_period", logsReadPeriod(reads, left),
			"fix", fmt.Sprintf("raise --api.rate-limit to %.1f if the provider allows it, or --collect.logs.interval to %s, or select fewer services (--collect.logs.environment, --collect.logs.service-name-regex)", rate, longer))
	case !over && l.warnedBudget:
		l.logger.Info("The API call budget covers every selected service's log read in one log interval again", "calls_needed", reads)
	}
	l.warnedBudget = over
}

// logsReadPeriod is the time reads calls take at left calls a second.
func logsReadPeriod(reads int, left float64) time.Duration {
	return (time.Duration(float64(reads)/left) * time.Second).Round(time.Second)
}

// showPeriod publishes a new read period before the pass: at a short
// budget the pass's reads take that long, and the first would show none.
func (l *logsReader) showPeriod() {
	if l.readPeriod != l.shownPeriod {
		l.publishData(l.fill())
	}
}

func (l *logsReader) publishLogs(start, end time.Time, failures int) {
	l.publish(l.fill(), start, end, failures)
}

func (l *logsReader) fill() func(*fleet.Snapshot) {
	logs := l.build()
	return func(s *fleet.Snapshot) { s.SetData(PartLogs, logs) }
}

func (l *logsReader) build() *Logs {
	logs := &Logs{PagesTruncated: l.truncated, Late: l.late, SkippedSeconds: l.skippedSeconds, EntriesSkipped: l.skippedEntries, SkewSkipped: l.skewSkipped,
		PageCapSkipped: l.pageCapSkipped,
		ReadPeriod:     l.readPeriod}
	l.shownPeriod = l.readPeriod
	logs.Counts = logCounts(l.cursors)
	return logs
}
