package dataplane

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// UsageClient is the part of *apiclient.Client the usage collector uses.
type UsageClient interface {
	GetServiceMetricsAvailableSeries(ctx context.Context, serviceID string) ([]string, error)
	GetServiceMetricsSeries(ctx context.Context, serviceID string, req apiclient.SeriesRequest) ([]apiclient.Series, error)
}

// Usage collector constants (docs/configuration.md).
const (
	// availableSeriesTTL is how long a service's list of available series
	// is trusted, and how long a project whose API has no usage series
	// waits before asking again.
	availableSeriesTTL = time.Hour
	// usageWindowSlack is added to the usage interval to make the window
	// of a series read: the data lags by at least a bucket (a minute), so
	// the window reaches back over the last complete bucket and overlaps
	// the previous read.
	usageWindowSlack = 2 * time.Minute
	// usagePublishEvery is how often a usage read publishes the values
	// that have arrived while its calls go on.
	usagePublishEvery = 5 * time.Second
)

// availability is what a service's available-series answer said: the
// API's name for each selected suffix it has.
type availability struct {
	// names holds the API's name of each of the runner's suffixes, in
	// their order ("" for a series the service does not have): a slice of
	// 16 strings a service rather than a map.
	names []string
	at    time.Time
}

// count is how many of the selected series the service has.
func (a availability) count() int {
	n := 0
	for _, name := range a.names {
		if name != "" {
			n++
		}
	}
	return n
}

// usageTask is one series read: a service and a selected suffix.
type usageTask struct {
	serviceID, suffix, name string
	last                    time.Time
	reads                   int
}

func (t usageTask) key() seriesKey { return seriesKey{t.serviceID, t.suffix} }

// seriesKey is one series of one service. Its strings are the selected
// service's id and the runner's suffix: a lookup allocates nothing.
type seriesKey struct{ serviceID, suffix string }

func compareSeriesKeys(a, b seriesKey) int {
	return cmp.Or(cmp.Compare(a.serviceID, b.serviceID), cmp.Compare(a.suffix, b.suffix))
}

// usageSeries is what the runner keeps of one series of one service.
type usageSeries struct {
	asked time.Time // last asked
	reads int       // times asked, to break ties fairly
	// values are the last samples, in the order they are published.
	values []fleet.UsageSample
	// jobsOver is how many job ids the last answer had beyond max-jobs:
	// they are counted, not kept.
	jobsOver int
	readAt   time.Time // last good read
}

// usageReader is the usage collector of one project. Only its goroutine
// touches its fields.
type usageReader struct {
	*runner
	client   UsageClient
	cfg      config.Usage
	suffixes []string
	sel      serviceSelector

	avail map[string]availability
	// series holds, by service and series, one entry for everything the
	// reader keeps of it (at 10,000 services, 160,000 entries: separate
	// maps each held a copy of the key).
	series map[seriesKey]*usageSeries

	// unsupportedUntil is when a project whose API answered 404 to the
	// usage paths is asked again; lastAvailOK is the last successful
	// available-series read, which tells a project without the paths
	// from a service that is gone.
	unsupportedUntil time.Time
	lastAvailOK      time.Time
	warnedCycles     int
	// overrunning is whether the last read hit its deadline.
	overrunning bool
}

func newUsageReader(r *runner, client UsageClient) *usageReader {
	cfg := r.opts.Usage
	u := &usageReader{
		runner: r, client: client, cfg: cfg, sel: newServiceSelector(cfg.Environments, cfg.NameMatcher()),
		avail: map[string]availability{}, series: map[seriesKey]*usageSeries{},
	}
	for _, s := range cfg.SelectedSeries() {
		u.suffixes = append(u.suffixes, "_"+strings.TrimPrefix(s, "_"))
	}
	return u
}

// tick reads what the plan picks and publishes the result: it forgets the
// services no longer selected, plans within the budget, reads the due
// available series, turns the collector off for a project whose API has
// no usage series, reads the series, and publishes.
func (u *usageReader) tick(ctx context.Context) {
	now := u.now()
	services := u.sel.selected(u.host.Snapshot())
	u.prune(services)
	if now.Before(u.unsupportedUntil) {
		u.publishUsage(now, now, 0, true)
		return
	}
	budget := u.budget()
	u.setBudget(budget)
	pl := u.plan(services, now, budget)
	u.warnBudget(pl)
	// A read starts its calls within one usage interval and ends within
	// two: state calls that keep going, or an API slower than every
	// timeout, neither stall the usage part nor hide its failures. Calls
	// not started in time are left for the next read.
	tickCtx, cancel := context.WithTimeout(ctx, 2*u.cfg.Interval)
	defer cancel()
	startCtx, cancelStart := context.WithTimeout(tickCtx, u.cfg.Interval)
	defer cancelStart()
	pass := &usagePass{now: now, lastPublished: now}
	if u.offWhenUnsupported(now, u.readAvailable(startCtx, tickCtx, pass, pl.availReads)) {
		return
	}
	u.readSeries(startCtx, tickCtx, pass, u.withNewServices(pl, now))
	u.warnOverrun(ctx, tickCtx)
	u.publishUsage(now, u.now(), pass.failures, false)
}

// usagePass is what one tick's reads found, and when the tick started.
// The calls run in parallel: mu guards it, and the runner's maps the
// calls change.
type usagePass struct {
	now           time.Time
	mu            sync.Mutex
	failures      int
	lastPublished time.Time
}

// readAvailable reads the available series of services, which tells which
// series each has and by which name, and returns whether any answered 404.
// Calls not started before startCtx ends are left for the next tick;
// callCtx bounds the calls.
func (u *usageReader) readAvailable(startCtx, callCtx context.Context, pass *usagePass, services []string) (notFound bool) {
	var g errgroup.Group
	g.SetLimit(max(u.opts.Concurrency, 1))
	for _, id := range services {
		g.Go(func() error {
			if !u.pace(startCtx) {
				return nil
			}
			names, err := u.client.GetServiceMetricsAvailableSeries(callCtx, id)
			pass.mu.Lock()
			defer pass.mu.Unlock()
			switch {
			case apiclient.IsNotFound(err):
				notFound = true
				u.avail[id] = availability{at: u.now()} // nothing to read for an hour
			case err != nil:
				pass.failures++
			default:
				u.lastAvailOK = u.now()
				u.avail[id] = availability{names: u.match(names), at: u.now()}
			}
			return nil
		})
	}
	_ = g.Wait()
	return notFound
}

// offWhenUnsupported tells whether the project's API has no usage series:
// a 404 while no service has answered within the hour means the API (the
// first revision, or a plan without usage series) has no such paths; a
// 404 beside answers is a service that is gone or has no series. Then it
// turns the collector off for availableSeriesTTL, publishes and returns
// true; otherwise it turns the collector on again if it was off.
func (u *usageReader) offWhenUnsupported(now time.Time, notFound bool) (off bool) {
	if notFound && u.now().Sub(u.lastAvailOK) > availableSeriesTTL {
		if u.unsupportedUntil.IsZero() {
			u.logger.Warn("The API has no usage series for this project (404); the usage collector is off for it and asks again hourly",
				"retry_in", availableSeriesTTL)
		}
		u.unsupportedUntil = now.Add(availableSeriesTTL)
		u.avail = map[string]availability{}
		u.publishUsage(now, u.now(), 0, true)
		return true
	}
	if !u.unsupportedUntil.IsZero() {
		u.logger.Info("The API has usage series for this project again")
		u.unsupportedUntil = time.Time{}
	}
	return false
}

// readSeries reads the tasks' series over the window that ends at the
// pass's start, as many at once as the concurrency allows, and keeps each
// answer's newest buckets as it returns. The contexts are readAvailable's.
func (u *usageReader) readSeries(startCtx, callCtx context.Context, pass *usagePass, tasks []usageTask) {
	var g errgroup.Group
	g.SetLimit(max(u.opts.Concurrency, 1))
	to := pass.now.Truncate(time.Second)
	from := to.Add(-u.cfg.Interval - usageWindowSlack).Truncate(time.Minute)
	for _, t := range tasks {
		g.Go(func() error {
			if !u.pace(startCtx) {
				return nil // not asked: first in the next read
			}
			pass.mu.Lock()
			s := u.series[t.key()]
			if s == nil {
				s = &usageSeries{}
				u.series[t.key()] = s
			}
			s.asked = pass.now
			s.reads++
			pass.mu.Unlock()
			series, err := u.client.GetServiceMetricsSeries(callCtx, t.serviceID, apiclient.SeriesRequest{
				Name: t.name, From: apiclient.Time{Time: from}, To: apiclient.Time{Time: to}, BucketSeconds: apiclient.MinBucketSeconds,
			})
			pass.mu.Lock()
			defer pass.mu.Unlock()
			u.apply(pass, s, t, series, err)
			return nil
		})
	}
	_ = g.Wait()
}

// apply keeps in s what one read of t's series returned, with pass.mu
// held: a 404 forgets the values (the service is asked for its available
// series again), a failure keeps the last values up to
// --collect.max-staleness.
func (u *usageReader) apply(pass *usagePass, s *usageSeries, t usageTask, series []apiclient.Series, err error) {
	switch {
	case apiclient.IsNotFound(err):
		delete(u.avail, t.serviceID) // asked again next tick
		s.values, s.jobsOver, s.readAt = nil, 0, time.Time{}
	case err != nil:
		pass.failures++
		if ms := u.opts.MaxStaleness; ms > 0 && u.now().Sub(s.readAt) > ms {
			s.values, s.jobsOver = nil, 0
		}
	default:
		s.readAt = u.now()
		s.values, s.jobsOver = newestBuckets(t, series, u.cfg.MaxJobs)
		slices.SortFunc(s.values, func(a, b fleet.UsageSample) int {
			return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Ordinal, b.Ordinal), compareJobIDs(a.JobID, b.JobID))
		})
		u.publishSoon(pass)
	}
}

// publishSoon publishes the values every usagePublishEvery while the calls
// go on: they are paced over the interval, and the values should not wait
// for the last, as the state's do not. The part's health waits for the
// end of the pass.
func (u *usageReader) publishSoon(pass *usagePass) {
	if now := u.now(); now.Sub(pass.lastPublished) >= usagePublishEvery {
		pass.lastPublished = now
		u.publishData(u.fill(false))
	}
}

// warnOverrun logs when a read hits its deadline of two usage intervals
// (not when ctx ended) that its remaining calls failed: once for a run of
// such reads, so that a slow API does not flood the log.
func (u *usageReader) warnOverrun(ctx, tickCtx context.Context) {
	overrun := ctx.Err() == nil && errors.Is(tickCtx.Err(), context.DeadlineExceeded)
	if overrun && !u.overrunning {
		u.logger.Warn("A usage read did not finish within two usage intervals; its remaining calls failed",
			"usage_interval", u.cfg.Interval)
	}
	u.overrunning = overrun
}

// prune forgets the services that are no longer selected.
func (u *usageReader) prune(services []string) {
	keep := make(map[string]bool, len(services))
	for _, id := range services {
		keep[id] = true
	}
	for id := range u.avail {
		if !keep[id] {
			delete(u.avail, id)
		}
	}
	for key := range u.series {
		if !keep[key.serviceID] {
			delete(u.series, key)
		}
	}
}
