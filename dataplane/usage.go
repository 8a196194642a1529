package dataplane

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
)

// The usage reader registers as the log reader does (logs.go): its settings, its start
// and its metrics (usagemetrics.go) from this init; its data type is usagedata.go's.
func init() {
	on := func(p config.Project) bool { return usageKey.Of(p.Collect).Enabled }
	field := usageKey.Field
	config.AddSettings(config.Setting{Flag: "collect.usage", Key: "collect.usage.enabled", Demo: true,
		Help:  "Read each selected service's usage series from the API (opt-in).",
		Field: field(func(s *usageSettings) any { return &s.Enabled })},
		config.Setting{Flag: "collect.usage.interval", Key: "collect.usage.interval", Default: defaultUsageInterval.String(),
			Help:  "Interval at which each selected usage series is read (at least 1m).",
			Field: field(func(s *usageSettings) any { return &s.Interval }), Check: config.IfEnabled(on, config.AtLeastDataInterval(minUsageInterval))},
		config.Setting{Flag: "collect.usage.series", Key: "collect.usage.series",
			Help:  "Usage series to read, by name suffix (repeatable; default: all).",
			Field: field(func(s *usageSettings) any { return &s.Series }), Check: config.IfEnabled(on, checkUsageSeries)})
	config.AddSettings(config.SelectionSettings("usage", "Read the usage of", func(c *config.Collect) *config.Selection { return &usageKey.In(c).Selection }, on)...)
	config.AddSettings(config.Setting{Flag: "collect.usage.max-jobs", Key: "collect.usage.max_jobs", Default: fmt.Sprint(defaultUsageMaxJobs),
		Help:  "Job label sets exported per service; the rest are only counted.",
		Field: field(func(s *usageSettings) any { return &s.MaxJobs }), Check: config.IfEnabled(on, notNegativeJobs)},
		config.Setting{Flag: "collect.usage.timestamps", Key: "collect.usage.timestamps",
			Help:  "Export each usage value with its bucket's time as sample timestamp.",
			Field: field(func(s *usageSettings) any { return &s.Timestamps })})
	register(PartUsage, "Usage series",
		func(c config.Collect) (bool, time.Duration) { s := usageKey.Of(c); return s.Enabled, s.Interval },
		func(r *runner, client UsageClient) func(context.Context) { return newUsageReader(r, client).tick })
	registerUsageMetrics()
}

// UsageClient is the part of *apiclient.Client the usage collector uses.
type UsageClient interface {
	GetServiceMetricsAvailableSeries(ctx context.Context, serviceID string) ([]string, error)
	GetServiceMetricsSeries(ctx context.Context, serviceID string, req apiclient.SeriesRequest) ([]apiclient.Series, error)
}

var _ UsageClient = (*apiclient.Client)(nil)

// Defaults of the usage collector's settings.
const (
	defaultUsageInterval = 5 * time.Minute
	// minUsageInterval is the shortest: the API's smallest bucket is a minute.
	minUsageInterval    = time.Minute
	defaultUsageMaxJobs = 50
)

// usageSettings are the usage collector's settings, kept in a config.Collect by usageKey.
type usageSettings struct {
	Enabled  bool
	Interval time.Duration
	Series   []string
	config.Selection
	MaxJobs    int
	Timestamps bool
}

var usageKey = config.NewReaderKey[usageSettings](PartUsage)

// selectedSeries returns Series, or every documented series when it is empty.
func (u usageSettings) selectedSeries() []string {
	if len(u.Series) == 0 {
		return documentedSeries
	}
	return u.Series
}

// suffixes returns the selected series, each with its leading "_", sorted
// (the publish's order) and once each: a series selected twice is read and
// exported once.
func (u usageSettings) suffixes() []string {
	series := u.selectedSeries()
	out := make([]string, 0, len(series))
	for _, s := range series {
		out = append(out, "_"+strings.TrimPrefix(s, "_"))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// documentedSeries is every documented series suffix, without its leading underscore.
var documentedSeries = func() []string {
	out := make([]string, len(apiclient.UsageSeriesSuffixes))
	for i, s := range apiclient.UsageSeriesSuffixes {
		out[i] = strings.TrimPrefix(s, "_")
	}
	return out
}()

func checkUsageSeries(_ config.Project, v any) []string {
	var out []string
	for _, s := range *v.(*[]string) {
		switch {
		case strings.TrimSpace(s) == "":
			out = append(out, " must not hold an empty name")
		case !slices.Contains(documentedSeries, strings.TrimPrefix(s, "_")):
			// It would cost calls and export nothing: no metric has it.
			out = append(out, fmt.Sprintf(": %q is not a documented usage series (one of %s)", s, strings.Join(documentedSeries, ", ")))
		}
	}
	return out
}

func notNegativeJobs(_ config.Project, v any) []string {
	if *v.(*int) < 0 {
		return []string{" must not be negative"}
	}
	return nil
}

// Usage collector constants (docs/configuration.md).
const (
	// availableSeriesTTL is about how often a service's available series are
	// read (each at its own second of the hour, usageavail.go); it also
	// spaces the retries of a project whose API has no usage series.
	availableSeriesTTL = time.Hour
	// usageWindowSlack reaches back over the last complete bucket: the data lags a bucket or more.
	usageWindowSlack = 2 * time.Minute
	// unsupportedAfter ticks of nothing but 404s turn usage off; a shorter run is an outage.
	unsupportedAfter  = 3
	usagePublishEvery = 5 * time.Second
)

// usageTask is one read of a plan, which holds one per series: 16 B.
type usageTask struct {
	svc        *usageService
	last       uint32
	idx, reads uint16
}

// usageService is kept per service, not per series: a map entry each cost more than the values.
type usageService struct {
	id    string
	avail availability
	// series is nil until a series is asked for; pub, what a publish shows, until one has points.
	series []usageSeries
	pub    *UsageService
	// shared: the last publish holds pub, so pub is replaced by a copy, never modified.
	shared bool
	// shape is a signature of what sets the nodes' totals, 0 until seen;
	// reshaped stamps when it last changed, 0 for never (usagetotals.go).
	// Both fit in the padding after shared.
	shape    uint16
	reshaped uint32
	// phase is the second of the hour at which its totals and available
	// series fall due (totalsPhase), hashed once.
	phase uint16
}

func (u *usageReader) seriesAt(svc *usageService, i int) *usageSeries {
	if svc.series == nil {
		svc.series = make([]usageSeries, len(u.suffixes))
	}
	return &svc.series[i]
}

type usageSeries struct {
	// 12 B, one per series: asked is the number of the read that last asked,
	// readAt a stamp, 0 for never; reads breaks ties fairly; jobsOver counts
	// the job ids beyond max-jobs, which are not kept.
	asked, readAt   uint32
	reads, jobsOver uint16
}

// stamp returns t as whole seconds after u.base, rounded up, plus one: 0 is
// never, and a value is never older than it says.
func (u *usageReader) stamp(t time.Time) uint32 {
	secs := max(0, (t.Sub(u.base)+time.Second-1)/time.Second)
	return uint32(min(secs, math.MaxUint32-1)) + 1
}

func (u *usageReader) stampTime(stamp uint32) time.Time {
	return u.base.Add(time.Duration(stamp-1) * time.Second)
}

type seriesRef struct {
	serviceID string
	idx       int
}

// usageReader is one project's usage collector; only its goroutine touches its fields.
type usageReader struct {
	*runner
	client   UsageClient
	cfg      usageSettings
	suffixes []string
	sel      serviceSelector

	services map[string]*usageService
	// nameSets lets the services share their lists of available names (see match).
	nameSets  map[string]*[]string
	ids       []string
	idsSorted bool
	// endSets lets the services share their published Ends (see movedEnds).
	endSets   map[string][]uint16
	endsKey   []byte
	published int
	// base and passes: what usageSeries' stamps count from.
	base    time.Time
	passes  uint32
	scratch []UsagePoint

	// notFound counts the ticks in a row in which every read answered 404.
	unsupportedUntil time.Time
	notFound         int
	warnedCycles     int
	// shownCycles: the refresh period last published is shownCycles intervals.
	shownCycles int
	paused      map[string]bool
	overrunning bool
	// totals has a bit per suffix that is a node's total; spaced: they are
	// read only when due (usagetotals.go).
	totals uint64
	spaced bool
	// rejected counts the values no node can have (usagecheck.go).
	rejected map[rejectKey]float64
}

func newUsageReader(r *runner, client UsageClient) *usageReader {
	cfg := usageKey.Of(r.opts.Collect)
	u := &usageReader{
		runner: r, client: client, cfg: cfg, sel: newServiceSelector(cfg.Environments, cfg.NameMatcher()),
		services: map[string]*usageService{}, nameSets: map[string]*[]string{}, base: r.now(),
	}
	u.suffixes = cfg.suffixes()
	u.totals, u.spaced = totalsMask(u.suffixes), spacedTotals(u.suffixes, cfg.Timestamps)
	return u
}

func (u *usageReader) tick(ctx context.Context) {
	now := u.now()
	snap := u.host.Snapshot()
	services := u.sel.selected(snap)
	u.prune(services)
	u.observeShapes(snap, now)
	u.paused = nil
	if snap != nil {
		u.paused = pausedServices(snap.Services)
	}
	u.forgetPaused()
	if now.Before(u.unsupportedUntil) {
		u.publishUsage(now, now, 0, true)
		return
	}
	budget := u.budget()
	u.setBudget(budget)
	pl := u.plan(services, now, budget)
	u.warnBudget(pl)
	u.showPeriod()
	// Calls start within one interval (the rest wait for the next read) and end within
	// two, so that a slow API or state shows as failures instead of stalling the part.
	tickCtx, cancel := context.WithTimeout(ctx, 2*u.cfg.Interval)
	defer cancel()
	startCtx, cancelStart := context.WithTimeout(tickCtx, u.cfg.Interval)
	defer cancelStart()
	u.passes++
	pass := &usagePass{now: now, lastPublished: now, seq: u.passes, skew: clockSkew(snap)}
	u.readAvailable(startCtx, tickCtx, pass, pl.availReads)
	u.readSeries(startCtx, tickCtx, pass, u.withNewServices(pl, now))
	u.warnOverrun(ctx, tickCtx)
	if u.settleNotFound(pass) {
		return
	}
	u.publishUsage(now, u.now(), pass.failures, false)
}

// usagePass is what a tick found; its parallel calls hold mu for it and for the maps they change.
type usagePass struct {
	now           time.Time
	skew          time.Duration
	seq           uint32
	mu            sync.Mutex
	failures      int
	lastPublished time.Time
	// answered decides what the 404s mean (see settleNotFound).
	answered       int
	notFoundAvail  []string
	notFoundSeries []seriesRef
}

func (u *usageReader) readAvailable(startCtx, callCtx context.Context, pass *usagePass, services []string) {
	inParallel(u.opts.Concurrency, services, func(id string) {
		if !u.pace(startCtx) {
			return
		}
		names, err := u.client.GetServiceMetricsAvailableSeries(callCtx, id)
		pass.mu.Lock()
		defer pass.mu.Unlock()
		switch {
		case offByDesign(err):
			pass.notFoundAvail = append(pass.notFoundAvail, id)
		case err != nil:
			pass.failures++
		default:
			pass.answered++
			u.service(id).avail = u.availableAt(u.match(names), u.now())
		}
	})
}

// settleNotFound: beside answers, a 404 is that service's (gone, or no such series); with
// none, an outage that keeps the values, until unsupportedAfter ticks of it turn the reader
// off for availableSeriesTTL (it then publishes and returns true).
func (u *usageReader) settleNotFound(pass *usagePass) (off bool) {
	now := u.now()
	notFound := len(pass.notFoundAvail) + len(pass.notFoundSeries)
	if pass.answered > 0 {
		for _, id := range pass.notFoundAvail {
			u.service(id).avail = u.availableAt(nil, now)
		}
		for _, k := range pass.notFoundSeries {
			if svc := u.services[k.serviceID]; svc != nil {
				svc.avail = availability{}
				s := u.seriesAt(svc, k.idx)
				s.jobsOver, s.readAt = 0, 0
				u.setPoints(svc, k.idx, nil)
			}
		}
		u.answeredAgain()
		return false
	}
	if notFound == 0 {
		return false
	}
	pass.failures += notFound
	for _, k := range pass.notFoundSeries {
		if svc := u.services[k.serviceID]; svc != nil {
			u.expire(svc, k.idx)
		}
	}
	u.notFound++
	if u.notFound == 1 {
		u.logger.Warn("Every usage read of the project answered 404 or 403; the usage part fails, keeps the last values and reads again each interval",
			"reads", notFound, "unsupported_after_intervals", unsupportedAfter)
	}
	if u.notFound < unsupportedAfter {
		return false
	}
	if u.unsupportedUntil.IsZero() {
		u.logger.Warn("The API has no usage series for this project (404 or 403); the usage collector is off for it and asks again hourly",
			"intervals", u.notFound, "retry_in", availableSeriesTTL)
	}
	u.unsupportedUntil = now.Add(availableSeriesTTL)
	for _, svc := range u.services {
		svc.avail = availability{}
	}
	u.publishUsage(pass.now, now, 0, true)
	return true
}

// offByDesign: a plan without the usage endpoints answers 404 or 403 on them
// while the state's reads succeed.
func offByDesign(err error) bool { return apiclient.IsNotFound(err) || apiclient.IsForbidden(err) }

func (u *usageReader) answeredAgain() {
	switch {
	case !u.unsupportedUntil.IsZero():
		u.logger.Info("The API has usage series for this project again")
	case u.notFound > 0:
		u.logger.Info("The project's usage reads answer again")
	}
	u.unsupportedUntil, u.notFound = time.Time{}, 0
}

func (u *usageReader) readSeries(startCtx, callCtx context.Context, pass *usagePass, tasks []usageTask) {
	// The window in the API's clock: one behind would ask for buckets yet to come.
	to := pass.now.Add(pass.skew).Truncate(time.Second)
	read := func(t usageTask) {
		if !u.pace(startCtx) {
			return // not asked: first in the next read
		}
		pass.mu.Lock()
		svc := t.svc
		names := svc.avail.list()
		if int(t.idx) >= len(names) {
			pass.mu.Unlock()
			return // its available series forgotten since the plan
		}
		name := names[t.idx]
		s := u.seriesAt(svc, int(t.idx))
		s.asked = pass.seq
		s.reads = min(s.reads, math.MaxUint16-1) + 1
		from := u.readFrom(to, s, int(t.idx))
		pass.mu.Unlock()
		series, err := u.client.GetServiceMetricsSeries(callCtx, svc.id, apiclient.SeriesRequest{
			Name: name, From: apiclient.Time{Time: from}, To: apiclient.Time{Time: to}, BucketSeconds: apiclient.MinBucketSeconds,
		})
		pass.mu.Lock()
		defer pass.mu.Unlock()
		u.apply(pass, t, series, err)
	}
	parts := u.totalsFirst(tasks)
	// From here the read holds runs of the tasks, not the tasks.
	for _, runs := range [...]*usageRuns{newUsageRuns(parts[0]), newUsageRuns(parts[1])} {
		inParallelFrom(u.opts.Concurrency, runs.len(), runs.next, read)
	}
}

// apply keeps what one read returned, with pass.mu held.
func (u *usageReader) apply(pass *usagePass, t usageTask, series []apiclient.Series, err error) {
	switch {
	case offByDesign(err):
		pass.notFoundSeries = append(pass.notFoundSeries, seriesRef{t.svc.id, int(t.idx)})
	case err != nil:
		pass.failures++
		u.expire(t.svc, int(t.idx))
	default:
		pass.answered++
		if suffix := u.suffixes[t.idx]; u.opts.UsageObserver.observes(suffix) {
			u.opts.UsageObserver.Observe(t.svc.id, suffix, series)
		}
		s := u.seriesAt(t.svc, int(t.idx))
		s.readAt = u.stamp(u.now())
		suffix := u.suffixes[t.idx]
		points, over := newestBuckets(u.scratch[:0], series, u.cfg.MaxJobs, u.valueCheck(t.svc, suffix),
			func(reason string, v float64) { u.reject(t.svc.id, suffix, reason, v) })
		s.jobsOver = uint16(min(over, math.MaxUint16))
		slices.SortFunc(points, func(a, b UsagePoint) int {
			la, lb := a.Labels, b.Labels
			return cmp.Or(cmp.Compare(la.Role(), lb.Role()), cmp.Compare(la.Ordinal(), lb.Ordinal()), compareJobIDs(la.JobID(), lb.JobID()))
		})
		u.setPoints(t.svc, int(t.idx), points)
		if cap(points) <= maxScratch {
			u.scratch = points[:0]
		}
		u.publishSoon(pass)
	}
}

func (u *usageReader) expire(svc *usageService, i int) {
	s := u.seriesAt(svc, i)
	if ms := u.opts.MaxStaleness; ms > 0 && (s.readAt == 0 || u.now().Sub(u.stampTime(u.staleFrom(svc, i, s))) > ms) {
		s.jobsOver = 0
		u.setPoints(svc, i, nil)
	}
}

// publishSoon publishes during a read, whose paced calls span the interval; the part's
// health waits for the end of the pass.
func (u *usageReader) publishSoon(pass *usagePass) {
	if now := u.now(); now.Sub(pass.lastPublished) >= usagePublishEvery {
		pass.lastPublished = now
		u.publishData(u.fill(false))
	}
}

// warnOverrun warns once per run of reads that hit their deadline (not ctx's end).
func (u *usageReader) warnOverrun(ctx, tickCtx context.Context) {
	overrun := ctx.Err() == nil && errors.Is(tickCtx.Err(), context.DeadlineExceeded)
	if overrun && !u.overrunning {
		u.logger.Warn("A usage read did not finish within two usage intervals; its remaining calls failed",
			"usage_interval", u.cfg.Interval)
	}
	u.overrunning = overrun
}

func (u *usageReader) prune(services []string) {
	keep := make(map[string]bool, len(services))
	for _, id := range services {
		keep[id] = true
	}
	for id := range u.services {
		if !keep[id] {
			delete(u.services, id)
			u.idsSorted = false
		}
	}
}

func (u *usageReader) service(id string) *usageService {
	svc := u.services[id]
	if svc == nil {
		svc = &usageService{id: id, phase: totalsPhase(id)}
		u.services[id] = svc
		u.idsSorted = false
	}
	return svc
}

func (u *usageReader) sortedIDs() []string {
	if !u.idsSorted {
		u.ids = slices.Sorted(maps.Keys(u.services))
		u.idsSorted = true
	}
	return u.ids
}
