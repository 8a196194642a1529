package dataplane

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/config"
)

// budget: what the state calls leave, at least one; -1 without a budget.
func (u *usageReader) budget() int {
	if !u.budgeted() {
		return -1
	}
	cycles := u.cfg.Interval.Seconds() / u.opts.Interval.Seconds()
	planned, _ := u.host.StateCalls()
	return max(int(u.opts.RateLimit*u.cfg.Interval.Seconds()*budgetShare-float64(planned)*cycles), 1)
}

type usagePlan struct {
	availReads []string    // services whose available series are read first
	tasks      []usageTask // series reads, least recently asked first
	needed     int         // calls to refresh everything once
	budget     int         // calls this tick may make, -1 for all
	cycles     int         // ticks a full refresh takes
}

// plan picks due available-series reads, then the least recently asked series.
func (u *usageReader) plan(services []string, now time.Time, budget int) usagePlan {
	pl := usagePlan{budget: budget, cycles: 1}
	// Made at its most at once: a large fleet's is megabytes, until the read
	// starts (which holds runs of it, usageruns.go).
	all := make([]usageTask, 0, u.taskCount(services, now))
	// Series of services not yet known count, so the first tick's numbers are right.
	pending := 0
	for _, id := range services {
		svc := u.services[id]
		if !u.fresh(svc, now) {
			pl.availReads = append(pl.availReads, id)
			if svc != nil && svc.known() {
				pending += u.readCount(svc, now)
			} else {
				pending += len(u.suffixes)
			}
			continue
		}
		for i := range u.suffixes {
			if u.reads(svc, i, now) {
				t := usageTask{svc: svc, idx: uint16(i)}
				if i < len(svc.series) {
					t.last, t.reads = svc.series[i].asked, svc.series[i].reads
				}
				all = append(all, t)
			}
		}
	}
	slices.SortFunc(all, func(a, b usageTask) int {
		return cmp.Or(cmp.Compare(a.last, b.last), cmp.Compare(a.reads, b.reads), cmp.Compare(a.svc.id, b.svc.id),
			cmp.Compare(u.suffixes[a.idx], u.suffixes[b.idx]))
	})
	pl.needed = len(pl.availReads) + pending + len(all)
	pl.tasks = all
	if budget >= 0 {
		// At most half the budget while series wait, even in a large fleet's first hour.
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

// setBudget leaves the limiter as it is without a budget (-1).
func (u *usageReader) setBudget(budget int) {
	if budget >= 0 {
		u.setRate(rate.Limit(float64(budget) / u.cfg.Interval.Seconds()))
	}
}

func (u *usageReader) taskCount(services []string, now time.Time) int {
	n := 0
	for _, id := range services {
		if svc := u.services[id]; u.fresh(svc, now) {
			n += u.readCount(svc, now)
		}
	}
	return n
}

// reads reports whether a plan at now reads series i of svc: one it
// has, not a node series of a paused service, and due (usagetotals.go).
func (u *usageReader) reads(svc *usageService, i int, now time.Time) bool {
	names := svc.avail.list()
	return i < len(names) && names[i] != "" && (!u.paused[svc.id] || isJobSeries(u.suffixes[i])) && u.due(svc, i, now)
}

// readCount counts the series of svc a plan at now reads.
func (u *usageReader) readCount(svc *usageService, now time.Time) int {
	n := 0
	for i := range u.suffixes {
		if u.reads(svc, i, now) {
			n++
		}
	}
	return n
}

// withNewServices: a new service's values need not wait a tick.
func (u *usageReader) withNewServices(pl usagePlan, now time.Time) []usageTask {
	tasks := pl.tasks
	if extra := u.plan(pl.availReads, now, -1).tasks; len(tasks) == 0 && (pl.budget < 0 || len(extra) <= pl.budget-len(pl.availReads)) {
		tasks = extra // the first read: no copy of every task
	} else if pl.budget < 0 {
		tasks = append(tasks, extra...)
	} else if room := pl.budget - len(pl.availReads) - len(pl.tasks); room > 0 {
		tasks = append(tasks, extra[:min(room, len(extra))]...)
	}
	return tasks
}

// warnBudget logs once when the series stop fitting, and once when they fit.
func (u *usageReader) warnBudget(pl usagePlan) {
	switch {
	case pl.cycles > 1 && u.warnedCycles <= 1:
		u.logger.Warn("The API call budget left after the state calls does not cover every selected usage series in one usage interval; they are refreshed round-robin",
			"calls_needed", pl.needed,
			"budget_per_interval", pl.budget,
			"refresh_period", time.Duration(pl.cycles)*u.cfg.Interval,
			"fix", u.budgetFix(pl.needed))
	case pl.cycles <= 1 && u.warnedCycles > 1:
		u.logger.Info("The API call budget covers every selected usage series in one usage interval again", "calls_needed", pl.needed)
	}
	u.warnedCycles = pl.cycles
}

func (u *usageReader) budgetFix(needed int) string {
	const fewer = "select fewer services or series (--collect.usage.environment, --collect.usage.service-name-regex, --collect.usage.series)"
	state := u.stateRate(true)
	rate := (state + float64(needed)/u.cfg.Interval.Seconds()) / budgetShare
	fix := fmt.Sprintf("raise --api.rate-limit to %.1f if the provider allows it, or ", rate)
	// An interval of an hour or more is no fix: each read would read the
	// available series again, and the values would be hours old.
	if left := u.opts.RateLimit*budgetShare - state; left > 0 {
		if interval := time.Duration(math.Ceil(float64(needed)/left/60)) * time.Minute; interval < availableSeriesTTL {
			fix += fmt.Sprintf("--collect.usage.interval to %s, or ", interval)
		}
	}
	return fix + fewer
}

// UsageReadLag is how far behind now the newest bucket that c's usage reads
// returned may be just before the next read: the read interval and the API's
// lag. A refresh round-robin over several intervals lags more.
func UsageReadLag(c config.Collect) time.Duration {
	return usageKey.Of(c).Interval + usageWindowSlack
}

// UsageSeriesLeftOut returns those of suffixes (with their leading "_")
// that c's usage reader does not read, without the "_": none when it is off.
func UsageSeriesLeftOut(c config.Collect, suffixes ...string) []string {
	s := usageKey.Of(c)
	if !s.Enabled {
		return nil
	}
	read := s.suffixes()
	var out []string
	for _, suffix := range suffixes {
		if name := strings.TrimPrefix(suffix, "_"); !slices.Contains(read, "_"+name) {
			out = append(out, name)
		}
	}
	return out
}

// maxCatchUp bounds how far back a read reaches for the buckets since the
// series' last read (a refresh period longer than the interval, a failure).
const maxCatchUp = time.Hour

// readFrom is where a read of series i starts: an interval and the slack
// back, or further to the bucket after its last read, so that no closed
// bucket is skipped between reads; an observed series' first read reaches
// the observer's backfill back. A node's total read when due exports its
// newest bucket only: it reaches no further. With pass.mu held.
func (u *usageReader) readFrom(to time.Time, s *usageSeries, i int) time.Time {
	back := u.cfg.Interval + usageWindowSlack
	suffix := u.suffixes[i]
	switch {
	case u.isTotal(i):
	case s.readAt != 0:
		// Elapsed in the exporter's clock, which the stamp is in.
		back = max(back, min(u.now().Sub(u.stampTime(s.readAt))+usageWindowSlack, maxCatchUp))
	case u.opts.UsageObserver.observes(suffix):
		back = max(back, min(u.opts.UsageObserver.Backfill, maxCatchUp))
	}
	return to.Add(-back).Truncate(time.Minute)
}
