package poller

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

	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

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

// usageRunner is the usage collector of one project. Only its goroutine
// touches its fields; what it publishes goes into the poller's state.
type usageRunner struct {
	p        *Poller
	client   UsageClient
	cfg      config.Usage
	suffixes []string
	sel      serviceSelector
	// limiter paces the calls at the usage share of the call budget; nil
	// when there is no budget.
	limiter *rate.Limiter
	// unpaced skips the pacing: unit tests drive ticks on a fake clock.
	unpaced bool

	avail map[string]availability
	// series holds, by service and series, one entry for everything the
	// runner keeps of it (at 10,000 services, 160,000 entries: separate
	// maps each held a copy of the key).
	series map[seriesKey]*usageSeries
	health fleet.PartHealth

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

func newUsageRunner(p *Poller, client UsageClient) *usageRunner {
	cfg := p.opts.Usage
	u := &usageRunner{
		p: p, client: client, cfg: cfg, sel: newServiceSelector(cfg.Environments, cfg.NameMatcher()),
		avail: map[string]availability{}, series: map[seriesKey]*usageSeries{},
		health: fleet.PartHealth{Name: fleet.PartUsage},
	}
	for _, s := range cfg.SelectedSeries() {
		u.suffixes = append(u.suffixes, "_"+strings.TrimPrefix(s, "_"))
	}
	return u
}

// run reads the usage every usage interval until ctx ends.
func (u *usageRunner) run(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-u.p.Ready(): // the state's first cycle goes first
	}
	t := time.NewTicker(u.cfg.Interval)
	defer t.Stop()
	for {
		u.tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// budget is how many usage calls one usage interval may make: what the
// project's call budget leaves after the state calls (the lists and
// per-resource calls of every full cycle in that time), at least one; -1
// without a budget.
func (u *usageRunner) budget() int {
	r := u.p.opts.RateLimit
	if r <= 0 || math.IsInf(r, 1) {
		return -1
	}
	cycles := u.cfg.Interval.Seconds() / u.p.opts.Interval.Seconds()
	state := float64(u.p.stateCalls.Load()) * cycles
	return max(int(r*u.cfg.Interval.Seconds()*budgetShare-state), 1)
}

// usagePlan is what one usage tick does.
type usagePlan struct {
	availReads []string    // services whose available series are read first
	tasks      []usageTask // series reads, least recently asked first
	needed     int         // calls to refresh everything once
	budget     int         // calls this tick may make, -1 for all
	cycles     int         // ticks a full refresh takes
}

// plan picks the calls of a tick: the available-series reads that are due,
// then the series least recently asked for, as many as the budget allows.
func (u *usageRunner) plan(services []string, now time.Time, budget int) usagePlan {
	pl := usagePlan{budget: budget, cycles: 1}
	var all []usageTask
	// Series of services whose available series are still to be read
	// count in what a refresh needs: as many as before, or every selected
	// one until known, so that the first tick's numbers are right.
	pending := 0
	for _, id := range services {
		a, ok := u.avail[id]
		if !ok || now.Sub(a.at) >= availableSeriesTTL {
			pl.availReads = append(pl.availReads, id)
			if ok {
				pending += a.count()
			} else {
				pending += len(u.suffixes)
			}
			continue
		}
		for i, suf := range u.suffixes {
			if i < len(a.names) && a.names[i] != "" {
				t := usageTask{serviceID: id, suffix: suf, name: a.names[i]}
				if s := u.series[t.key()]; s != nil {
					t.last, t.reads = s.asked, s.reads
				}
				all = append(all, t)
			}
		}
	}
	slices.SortFunc(all, func(a, b usageTask) int {
		return cmp.Or(a.last.Compare(b.last), cmp.Compare(a.reads, b.reads), cmp.Compare(a.serviceID, b.serviceID), cmp.Compare(a.suffix, b.suffix))
	})
	pl.needed = len(pl.availReads) + pending + len(all)
	pl.tasks = all
	if budget >= 0 {
		// Available-series reads take at most half the budget while
		// series are waiting, so that a large fleet's first hour is not
		// spent on them alone.
		availCap := budget
		if len(all) > 0 {
			availCap = max(1, budget/2)
		}
		if len(pl.availReads) > availCap {
			pl.availReads = pl.availReads[:availCap]
		}
		pl.tasks = all[:min(len(all), budget-len(pl.availReads))]
		pl.cycles = max(1, (pl.needed+budget-1)/budget)
	}
	return pl
}

// tick reads what the plan picks and publishes the result: it forgets the
// services no longer selected, plans within the budget, reads the due
// available series, turns the collector off for a project whose API has
// no usage series, reads the series, and publishes.
func (u *usageRunner) tick(ctx context.Context) {
	now := u.p.opts.Now()
	services := u.sel.selected(u.p.Snapshot())
	u.prune(services)
	if now.Before(u.unsupportedUntil) {
		u.publish(now, now, 0, true)
		return
	}
	budget := u.budget()
	u.setRate(budget)
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
	u.publish(now, u.p.opts.Now(), pass.failures, false)
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

// setRate paces the calls at budget calls per usage interval; without a
// budget (-1) the limiter is left as it is.
func (u *usageRunner) setRate(budget int) {
	if budget < 0 {
		return
	}
	limit := rate.Limit(float64(budget) / u.cfg.Interval.Seconds())
	if u.limiter == nil {
		u.limiter = rate.NewLimiter(limit, 1)
		return
	}
	u.limiter.SetLimit(limit)
}

// readAvailable reads the available series of services, which tells which
// series each has and by which name, and returns whether any answered 404.
// Calls not started before startCtx ends are left for the next tick;
// callCtx bounds the calls.
func (u *usageRunner) readAvailable(startCtx, callCtx context.Context, pass *usagePass, services []string) (notFound bool) {
	var g errgroup.Group
	g.SetLimit(max(u.p.opts.Concurrency, 1))
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
				u.avail[id] = availability{at: u.p.opts.Now()} // nothing to read for an hour
			case err != nil:
				pass.failures++
			default:
				u.lastAvailOK = u.p.opts.Now()
				u.avail[id] = availability{names: u.match(names), at: u.p.opts.Now()}
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
func (u *usageRunner) offWhenUnsupported(now time.Time, notFound bool) (off bool) {
	if notFound && u.p.opts.Now().Sub(u.lastAvailOK) > availableSeriesTTL {
		if u.unsupportedUntil.IsZero() {
			u.p.logger.Warn("The API has no usage series for this project (404); the usage collector is off for it and asks again hourly",
				"retry_in", availableSeriesTTL)
		}
		u.unsupportedUntil = now.Add(availableSeriesTTL)
		u.avail = map[string]availability{}
		u.publish(now, u.p.opts.Now(), 0, true)
		return true
	}
	if !u.unsupportedUntil.IsZero() {
		u.p.logger.Info("The API has usage series for this project again")
		u.unsupportedUntil = time.Time{}
	}
	return false
}

// withNewServices returns the plan's series reads, then those of the
// services whose available series were just read, as far as the budget
// goes: a new service's values need not wait a tick.
func (u *usageRunner) withNewServices(pl usagePlan, now time.Time) []usageTask {
	tasks := pl.tasks
	if extra := u.plan(pl.availReads, now, -1).tasks; pl.budget < 0 {
		tasks = append(tasks, extra...)
	} else if room := pl.budget - len(pl.availReads) - len(pl.tasks); room > 0 {
		tasks = append(tasks, extra[:min(room, len(extra))]...)
	}
	return tasks
}

// readSeries reads the tasks' series over the window that ends at the
// pass's start, as many at once as the concurrency allows, and keeps each
// answer's newest buckets as it returns. The contexts are readAvailable's.
func (u *usageRunner) readSeries(startCtx, callCtx context.Context, pass *usagePass, tasks []usageTask) {
	var g errgroup.Group
	g.SetLimit(max(u.p.opts.Concurrency, 1))
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
func (u *usageRunner) apply(pass *usagePass, s *usageSeries, t usageTask, series []apiclient.Series, err error) {
	switch {
	case apiclient.IsNotFound(err):
		delete(u.avail, t.serviceID) // asked again next tick
		s.values, s.jobsOver, s.readAt = nil, 0, time.Time{}
	case err != nil:
		pass.failures++
		if ms := u.p.opts.MaxStaleness; ms > 0 && u.p.opts.Now().Sub(s.readAt) > ms {
			s.values, s.jobsOver = nil, 0
		}
	default:
		s.readAt = u.p.opts.Now()
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
func (u *usageRunner) publishSoon(pass *usagePass) {
	if now := u.p.opts.Now(); now.Sub(pass.lastPublished) >= usagePublishEvery {
		pass.lastPublished = now
		u.p.setUsage(u.build(false), nil)
	}
}

// warnOverrun logs when a read hits its deadline of two usage intervals
// (not when ctx ended) that its remaining calls failed: once for a run of
// such reads, so that a slow API does not flood the log.
func (u *usageRunner) warnOverrun(ctx, tickCtx context.Context) {
	overrun := ctx.Err() == nil && errors.Is(tickCtx.Err(), context.DeadlineExceeded)
	if overrun && !u.overrunning {
		u.p.logger.Warn("A usage read did not finish within two usage intervals; its remaining calls failed",
			"usage_interval", u.cfg.Interval)
	}
	u.overrunning = overrun
}

// pace waits for the usage share of the budget, then for the state's
// calls to end (they go first); false when ctx ended.
func (u *usageRunner) pace(ctx context.Context) bool {
	if u.limiter != nil && !u.unpaced && u.limiter.Wait(ctx) != nil {
		return false
	}
	return u.p.stateGate.wait(ctx) == nil
}

// match finds, for each selected suffix in order, the first available
// name that ends in it (see availability.names); nil when none does.
// Names the collector does not select are ignored.
func (u *usageRunner) match(names []string) []string {
	var out []string
	for i, suf := range u.suffixes {
		for _, n := range names {
			if strings.HasSuffix(n, suf) && len(n) > len(suf) {
				if out == nil {
					out = make([]string, len(u.suffixes))
				}
				out[i] = n
				break
			}
		}
	}
	return out
}

// newestBuckets keeps, for each label set of an answer, the newest bucket
// with a value; a label set whose window is all null is left out. Label
// sets that differ only in labels the exporter does not export (an extra
// zone, say) are one series: the newest bucket of them wins, the first in
// the answer on a tie, so that no series is exported twice. Of the job ids,
// only the maxJobs lowest are kept; over is how many more there were.
func newestBuckets(t usageTask, series []apiclient.Series, maxJobs int) (out []fleet.UsageSample, over int) {
	type key struct{ role, ordinal, job string }
	index := map[key]int{}
	for _, s := range series {
		var best *apiclient.SeriesPoint
		for i := range s.Data {
			p := &s.Data[i]
			if p.Value.Valid && !p.Time.IsZero() && (best == nil || p.Time.After(best.Time.Time)) {
				best = p
			}
		}
		if best == nil {
			continue
		}
		k := key{s.Labels[apiclient.LabelRole], s.Labels[apiclient.LabelOrdinal], s.Labels[apiclient.LabelJobID]}
		smp := fleet.UsageSample{
			ServiceID: t.serviceID, Suffix: t.suffix, Role: k.role, Ordinal: k.ordinal, JobID: k.job,
			Value: best.Value.Value, Bucket: best.Time.Time,
		}
		if i, ok := index[k]; ok {
			if smp.Bucket.After(out[i].Bucket) {
				out[i] = smp
			}
			continue
		}
		index[k] = len(out)
		out = append(out, smp)
	}
	jobs := map[string]bool{}
	for _, smp := range out {
		if smp.JobID != "" {
			jobs[smp.JobID] = true
		}
	}
	if len(jobs) <= maxJobs {
		return out, 0
	}
	ids := slices.SortedFunc(maps.Keys(jobs), compareJobIDs)
	for _, id := range ids[maxJobs:] {
		delete(jobs, id)
	}
	out = slices.DeleteFunc(out, func(smp fleet.UsageSample) bool { return smp.JobID != "" && !jobs[smp.JobID] })
	return slices.Clip(out), len(ids) - maxJobs
}

// prune forgets the services that are no longer selected.
func (u *usageRunner) prune(services []string) {
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

// warnBudget logs once, when the selected series stop fitting in one usage
// interval, what it costs and what to change, and once when they fit again.
func (u *usageRunner) warnBudget(pl usagePlan) {
	switch {
	case pl.cycles > 1 && u.warnedCycles <= 1:
		u.p.logger.Warn("The API call budget left after the state calls does not cover every selected usage series in one usage interval; they are refreshed round-robin",
			"calls_needed", pl.needed,
			"budget_per_interval", pl.budget,
			"refresh_period", time.Duration(pl.cycles)*u.cfg.Interval,
			"fix", u.budgetFix(pl.needed))
	case pl.cycles <= 1 && u.warnedCycles > 1:
		u.p.logger.Info("The API call budget covers every selected usage series in one usage interval again", "calls_needed", pl.needed)
	}
	u.warnedCycles = pl.cycles
}

// budgetFix says what makes needed usage calls fit in one usage interval:
// the rate limit that covers them beside every state call (at the budget's
// share), or, when the state leaves room at the current rate, the usage
// interval whose budget holds them.
func (u *usageRunner) budgetFix(needed int) string {
	const fewer = "select fewer services or series (--collect.usage.environment, --collect.usage.service-name-regex, --collect.usage.series)"
	state := float64(u.p.stateNeeded.Load()) / u.p.opts.Interval.Seconds()
	rate := (state + float64(needed)/u.cfg.Interval.Seconds()) / budgetShare
	fix := fmt.Sprintf("raise --api.rate-limit to %.1f if the provider allows it, or ", rate)
	// An interval of an hour or more is no fix: each read would read the
	// available series again, and the values would be hours old.
	if left := u.p.opts.RateLimit*budgetShare - state; left > 0 {
		if interval := time.Duration(math.Ceil(float64(needed)/left/60)) * time.Minute; interval < availableSeriesTTL {
			fix += fmt.Sprintf("--collect.usage.interval to %s, or ", interval)
		}
	}
	return fix + fewer
}

// publish builds the project's usage from the last values and hands it to
// the poller with the part's health.
func (u *usageRunner) publish(start, end time.Time, failures int, unsupported bool) {
	h := fleet.PartHealth{Name: fleet.PartUsage, Success: failures == 0, Duration: max(end.Sub(start), 0), LastSuccess: u.health.LastSuccess}
	if h.Success {
		h.LastSuccess = end
	}
	u.health = h
	u.p.setUsage(u.build(unsupported), &h)
}

// build makes the project's usage from the last values.
func (u *usageRunner) build(unsupported bool) *fleet.Usage {
	usage := &fleet.Usage{Timestamps: u.cfg.Timestamps, RefreshPeriod: time.Duration(max(u.warnedCycles, 1)) * u.cfg.Interval}
	if !unsupported {
		// By service id, then suffix: the exposition chunks them so. Each
		// list is the series' own (apply replaces it, never modifies it),
		// copied only when max-jobs leaves some of its jobs out.
		keys := slices.SortedFunc(maps.Keys(u.series), compareSeriesKeys)
		usage.Series = make([][]fleet.UsageSample, 0, len(keys))
		jobs := map[string]map[string]bool{} // service -> job ids kept
		over := map[string]map[string]bool{} // service -> job ids left out
		for _, k := range keys {
			list := u.series[k].values
			if len(list) == 0 {
				continue
			}
			var filtered []fleet.UsageSample // nil while nothing is left out
			for i, s := range list {
				if s.JobID != "" {
					kept := jobs[s.ServiceID]
					if kept == nil {
						kept = map[string]bool{}
						jobs[s.ServiceID] = kept
					}
					if !kept[s.JobID] && len(kept) >= u.cfg.MaxJobs {
						if over[s.ServiceID] == nil {
							over[s.ServiceID] = map[string]bool{}
						}
						over[s.ServiceID][s.JobID] = true
						if filtered == nil {
							filtered = slices.Clone(list[:i])
						}
						continue
					}
					kept[s.JobID] = true
				}
				if filtered != nil {
					filtered = append(filtered, s)
				}
			}
			switch {
			case filtered == nil:
				usage.Series = append(usage.Series, list)
			case len(filtered) > 0:
				usage.Series = append(usage.Series, filtered)
			}
		}
		// The job series of a service have the same jobs, as a rule: the
		// larger count of those left out of one answer or across answers.
		counted := map[string]int{}
		for k, s := range u.series {
			if s.jobsOver > 0 {
				counted[k.serviceID] = max(counted[k.serviceID], s.jobsOver)
			}
		}
		for id, ids := range over {
			counted[id] = max(counted[id], len(ids))
		}
		for _, n := range counted {
			usage.JobsOverLimit += n
		}
	}
	return usage
}

// compareJobIDs orders job ids shortest first, then as text: numeric ids
// by number, so that max-jobs keeps the lowest ids whatever their width.
func compareJobIDs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
}
