package dataplane

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

func init() {
	register(reader{fleet.PartUsage,
		func(c config.Collect) (bool, time.Duration) { return c.Usage.Enabled, c.Usage.Interval },
		func(r *runner, client any) func(context.Context) {
			if uc, ok := client.(UsageClient); ok {
				return newUsageReader(r, uc).tick
			}
			return nil
		}})
}

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
	// unsupportedAfter is how many ticks in a row every usage read of a
	// project must answer 404 before its API is taken to have no usage
	// series (10 minutes at the default interval): a shorter run of 404s
	// is an outage of the usage endpoints.
	unsupportedAfter = 3
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

// usageTask is one series read: a service and the index of a selected
// suffix, with when it was last asked (Unix nanoseconds, 0 for never) and
// how often. A read's plan holds one for every series (150,000 at 10,000
// services) while the read goes on: 24 bytes, not the names themselves.
type usageTask struct {
	svc        *usageService
	idx, reads int32
	last       int64
}

// usageService is what the reader keeps of one selected service: its
// available series, and each selected series by the index of its suffix.
// One entry a service, not one a series: a map entry, its key and a
// pointer for each of 160,000 series at 10,000 services cost more than
// the values they held.
type usageService struct {
	id    string
	avail availability
	// series and pub are nil until one of the service's series is asked
	// for: pub holds what a publish shows, series the rest.
	series []usageSeries
	pub    []fleet.UsageSeries
	// shared is set while the last publish holds pub: it is then replaced
	// with a copy, never modified. series is not published: no copy.
	shared bool
}

// known reports whether the service's available series have been read
// (or answered 404) and not forgotten since.
func (s *usageService) known() bool { return !s.avail.at.IsZero() }

// fresh reports whether s is known and its available series need not be
// read again at now; false for nil.
func (s *usageService) fresh(now time.Time) bool {
	return s != nil && s.known() && now.Sub(s.avail.at) < availableSeriesTTL
}

// seriesAt returns the state of svc's series with suffix index i, to be
// modified in place.
func (u *usageReader) seriesAt(svc *usageService, i int) *usageSeries {
	if svc.series == nil {
		svc.series = make([]usageSeries, len(u.suffixes))
		svc.pub = make([]fleet.UsageSeries, len(u.suffixes))
		for j := range svc.pub {
			svc.pub[j] = fleet.UsageSeries{ServiceID: svc.id, Suffix: u.suffixes[j]}
		}
	}
	return &svc.series[i]
}

// pubAt returns the last samples of svc's series with suffix index i, in
// the order they are published, to be modified: the service's are copied
// first if a publish holds them.
func (u *usageReader) pubAt(svc *usageService, i int) *fleet.UsageSeries {
	u.seriesAt(svc, i)
	if svc.shared {
		svc.pub = slices.Clone(svc.pub)
		svc.shared = false
	}
	return &svc.pub[i]
}

// usageSeries is what the reader keeps of one series of one service
// besides its samples.
type usageSeries struct {
	// asked is when the series was last asked for, readAt when it was
	// last read well, in Unix nanoseconds; 0 for never.
	asked, readAt int64
	// reads counts the times asked, to break ties fairly; jobsOver is
	// how many job ids the last answer had beyond max-jobs: they are
	// counted, not kept.
	reads, jobsOver int32
}

// seriesRef names one series of one service: its suffix by index.
type seriesRef struct {
	serviceID string
	idx       int
}

// usageReader is the usage collector of one project. Only its goroutine
// touches its fields.
type usageReader struct {
	*runner
	client   UsageClient
	cfg      config.Usage
	suffixes []string
	sel      serviceSelector

	// order holds the indexes of suffixes sorted by suffix: the order in
	// which a service's series are published.
	order    []int
	services map[string]*usageService
	// nameSets holds each list of available names the services' answers
	// made (see match): at 10,000 services, one list, not 10,000.
	nameSets map[string][]string
	// ids are the keys of services, sorted, while idsSorted is set.
	ids       []string
	idsSorted bool
	// published is how many series the last publish held: the next
	// one's list is made that long at once.
	published int

	// unsupportedUntil is when a project whose API has no usage series is
	// asked again; notFound counts the ticks in a row, up to now, in which
	// every read answered 404.
	unsupportedUntil time.Time
	notFound         int
	warnedCycles     int
	// paused holds the selected services the state says are PAUSED at
	// this tick (see usagepaused.go).
	paused map[string]bool
	// overrunning is whether the last read hit its deadline.
	overrunning bool
}

func newUsageReader(r *runner, client UsageClient) *usageReader {
	cfg := r.opts.Usage
	u := &usageReader{
		runner: r, client: client, cfg: cfg, sel: newServiceSelector(cfg.Environments, cfg.NameMatcher()),
		services: map[string]*usageService{}, nameSets: map[string][]string{},
	}
	for i, s := range cfg.SelectedSeries() {
		u.suffixes = append(u.suffixes, "_"+strings.TrimPrefix(s, "_"))
		u.order = append(u.order, i)
	}
	slices.SortStableFunc(u.order, func(a, b int) int { return cmp.Compare(u.suffixes[a], u.suffixes[b]) })
	return u
}

// tick reads what the plan picks and publishes the result: it forgets the
// services no longer selected, plans within the budget, reads the due
// available series and then the series, settles the 404s (which may turn
// the reader off for a while), and publishes.
func (u *usageReader) tick(ctx context.Context) {
	now := u.now()
	snap := u.host.Snapshot()
	services := u.sel.selected(snap)
	u.prune(services)
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
	// A read starts its calls within one usage interval and ends within
	// two: state calls that keep going, or an API slower than every
	// timeout, neither stall the usage part nor hide its failures. Calls
	// not started in time are left for the next read.
	tickCtx, cancel := context.WithTimeout(ctx, 2*u.cfg.Interval)
	defer cancel()
	startCtx, cancelStart := context.WithTimeout(tickCtx, u.cfg.Interval)
	defer cancelStart()
	pass := &usagePass{now: now, lastPublished: now}
	u.readAvailable(startCtx, tickCtx, pass, pl.availReads)
	u.readSeries(startCtx, tickCtx, pass, u.withNewServices(pl, now))
	u.warnOverrun(ctx, tickCtx)
	if u.settleNotFound(pass) {
		return
	}
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
	// answered counts the reads that answered; the 404s are settled once
	// the tick knows whether any did (see settleNotFound).
	answered       int
	notFoundAvail  []string
	notFoundSeries []seriesRef
}

// readAvailable reads the available series of services, which tells which
// series each has and by which name.
// Calls not started before startCtx ends are left for the next tick;
// callCtx bounds the calls.
func (u *usageReader) readAvailable(startCtx, callCtx context.Context, pass *usagePass, services []string) {
	inParallel(u.opts.Concurrency, services, func(id string) {
		if !u.pace(startCtx) {
			return
		}
		names, err := u.client.GetServiceMetricsAvailableSeries(callCtx, id)
		pass.mu.Lock()
		defer pass.mu.Unlock()
		switch {
		case apiclient.IsNotFound(err):
			pass.notFoundAvail = append(pass.notFoundAvail, id)
		case err != nil:
			pass.failures++
		default:
			pass.answered++
			u.service(id).avail = availability{names: u.match(names), at: u.now()}
		}
	})
}

// settleNotFound says what the tick's 404s mean. Beside answers, a 404 is
// a service that is gone or has no such series: it is not asked for its
// series for availableSeriesTTL, or asked for its available series again.
// With no answer, it is an outage of the usage endpoints: the reads
// failed, the values stay, and all is read again next tick; only when
// every read has answered 404 for unsupportedAfter ticks in a row is the
// project taken to have no usage series, and the reader off for availableSeriesTTL (then
// it publishes and returns true).
func (u *usageReader) settleNotFound(pass *usagePass) (off bool) {
	now := u.now()
	notFound := len(pass.notFoundAvail) + len(pass.notFoundSeries)
	if pass.answered > 0 {
		for _, id := range pass.notFoundAvail {
			u.service(id).avail = availability{at: now}
		}
		for _, k := range pass.notFoundSeries {
			if svc := u.services[k.serviceID]; svc != nil {
				svc.avail = availability{}
				s := u.seriesAt(svc, k.idx)
				s.jobsOver, s.readAt = 0, 0
				u.pubAt(svc, k.idx).Samples = nil
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
		u.logger.Warn("Every usage read of the project answered 404; the usage part fails, keeps the last values and reads again each interval",
			"reads", notFound, "unsupported_after_intervals", unsupportedAfter)
	}
	if u.notFound < unsupportedAfter {
		return false
	}
	if u.unsupportedUntil.IsZero() {
		u.logger.Warn("The API has no usage series for this project (404); the usage collector is off for it and asks again hourly",
			"intervals", u.notFound, "retry_in", availableSeriesTTL)
	}
	u.unsupportedUntil = now.Add(availableSeriesTTL)
	for _, svc := range u.services {
		svc.avail = availability{}
	}
	u.publishUsage(pass.now, now, 0, true)
	return true
}

// answeredAgain ends a run of 404s, and the reader's time off.
func (u *usageReader) answeredAgain() {
	switch {
	case !u.unsupportedUntil.IsZero():
		u.logger.Info("The API has usage series for this project again")
	case u.notFound > 0:
		u.logger.Info("The project's usage reads answer again")
	}
	u.unsupportedUntil, u.notFound = time.Time{}, 0
}

// readSeries reads the tasks' series over the window that ends at the
// pass's start, as many at once as the concurrency allows, and keeps each
// answer's newest buckets as it returns. The contexts are readAvailable's.
func (u *usageReader) readSeries(startCtx, callCtx context.Context, pass *usagePass, tasks []usageTask) {
	to := pass.now.Truncate(time.Second)
	from := to.Add(-u.cfg.Interval - usageWindowSlack).Truncate(time.Minute)
	inParallel(u.opts.Concurrency, tasks, func(t usageTask) {
		if !u.pace(startCtx) {
			return // not asked: first in the next read
		}
		pass.mu.Lock()
		svc := t.svc
		if int(t.idx) >= len(svc.avail.names) {
			pass.mu.Unlock()
			return // its available series forgotten since the plan
		}
		name := svc.avail.names[t.idx]
		s := u.seriesAt(svc, int(t.idx))
		s.asked = pass.now.UnixNano()
		s.reads++
		pass.mu.Unlock()
		series, err := u.client.GetServiceMetricsSeries(callCtx, svc.id, apiclient.SeriesRequest{
			Name: name, From: apiclient.Time{Time: from}, To: apiclient.Time{Time: to}, BucketSeconds: apiclient.MinBucketSeconds,
		})
		pass.mu.Lock()
		defer pass.mu.Unlock()
		u.apply(pass, t, series, err)
	})
}

// apply keeps what one read of t's series returned, with pass.mu held: a
// failure keeps the last values up to --collect.max-staleness, a 404 is
// settled at the end of the tick (see settleNotFound).
func (u *usageReader) apply(pass *usagePass, t usageTask, series []apiclient.Series, err error) {
	switch {
	case apiclient.IsNotFound(err):
		pass.notFoundSeries = append(pass.notFoundSeries, seriesRef{t.svc.id, int(t.idx)})
	case err != nil:
		pass.failures++
		u.expire(t.svc, int(t.idx))
	default:
		pass.answered++
		s := u.seriesAt(t.svc, int(t.idx))
		s.readAt = u.now().UnixNano()
		samples, over := newestBuckets(series, u.cfg.MaxJobs)
		s.jobsOver = int32(min(over, math.MaxInt32))
		// Found again: a publish since may hold the service's samples.
		u.pubAt(t.svc, int(t.idx)).Samples = samples
		slices.SortFunc(samples, func(a, b fleet.UsagePoint) int {
			la, lb := a.Labels, b.Labels
			return cmp.Or(cmp.Compare(la.Role(), lb.Role()), cmp.Compare(la.Ordinal(), lb.Ordinal()), compareJobIDs(la.JobID(), lb.JobID()))
		})
		u.publishSoon(pass)
	}
}

// expire drops the values of svc's series i once its refresh has failed
// for longer than --collect.max-staleness.
func (u *usageReader) expire(svc *usageService, i int) {
	s := u.seriesAt(svc, i)
	if ms := u.opts.MaxStaleness; ms > 0 && (s.readAt == 0 || u.now().Sub(time.Unix(0, s.readAt)) > ms) {
		s.jobsOver = 0
		u.pubAt(svc, i).Samples = nil
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
	for id := range u.services {
		if !keep[id] {
			delete(u.services, id)
			u.idsSorted = false
		}
	}
}

// service returns the entry of service id, made if need be.
func (u *usageReader) service(id string) *usageService {
	svc := u.services[id]
	if svc == nil {
		svc = &usageService{id: id}
		u.services[id] = svc
		u.idsSorted = false
	}
	return svc
}

// sortedIDs returns the ids of the services kept, sorted: sorted again
// only when a service came or went.
func (u *usageReader) sortedIDs() []string {
	if !u.idsSorted {
		u.ids = slices.Sorted(maps.Keys(u.services))
		u.idsSorted = true
	}
	return u.ids
}
