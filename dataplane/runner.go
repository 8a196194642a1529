// Package dataplane reads a project's data plane, the opt-in usage series
// and log counts, beside the poller that reads its state. Each reader is
// one file (usage.go, logs.go) on one shared runner (runner.go): its tick,
// its share of the call budget the state calls leave, waiting for the
// state calls, and its part's health. The readers publish into the
// poller's snapshots through Host, never by calling the API on a scrape.
package dataplane

import (
	"context"
	"log/slog"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// Host is what the readers need of the project's poller.
type Host interface {
	ProjectID() string
	// Snapshot is the latest state: the services and their statuses.
	Snapshot() *fleet.Snapshot
	// Ready is closed when the state's first full cycle has ended: the
	// readers start then, so that the state goes first.
	Ready() <-chan struct{}
	// WaitForState returns once no state calls run, or ctx's error: the
	// readers never queue behind them for the rate limit's tokens.
	WaitForState(ctx context.Context) error
	// StateCalls is how many calls the last full cycle planned, and how
	// many refreshing every resource takes.
	StateCalls() (planned, needed int)
	// PublishPart makes every snapshot from now on hold the part's data
	// (fill sets its field of the snapshot, under the poller's lock: it
	// must not call back) and, unless health is nil, its health; it
	// publishes a snapshot with them.
	PublishPart(name string, health *fleet.PartHealth, fill func(*fleet.Snapshot))
}

// Options configure the readers of one project.
type Options struct {
	// Collect is the project's collect settings; zero fields take the
	// configuration's defaults.
	config.Collect
	// RateLimit is the client's rate limit in requests per second; 0 or
	// +Inf means no budget.
	RateLimit float64
	Logger    *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Positions is the log state file (--collect.logs.state-file), shared
	// by every project; nil without one. APIURL is the project's API, the
	// identity its positions are saved under.
	Positions *LogPositions
	APIURL    string
}

// budgetShare is the share of RateLimit x Interval the calls plan to
// spend, as the poller's cycle does: the rest is left to retries and
// admin refreshes.
const budgetShare = 0.9

// Run runs the readers that opts enable and client supports until ctx
// ends. It returns at once; the readers run on their own goroutines.
func Run(ctx context.Context, host Host, client any, opts Options) {
	if opts.Interval <= 0 {
		opts.Interval = config.DefaultInterval
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = config.DefaultConcurrency
	}
	if opts.RateLimit < 0 || math.IsNaN(opts.RateLimit) {
		opts.RateLimit = 0
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Logger = opts.Logger.With("project_id", host.ProjectID())
	for _, rd := range readers {
		on, interval := rd.enabled(opts.Collect)
		if !on {
			continue
		}
		r := newRunner(host, opts, rd.part, interval)
		if tick := rd.start(r, client); tick != nil {
			go r.run(ctx, tick)
		}
	}
}

// reader is a data-plane reader as its file registers it.
type reader struct {
	// part names its part of the snapshots and its health.
	part string
	// enabled says whether c turns it on, and its interval.
	enabled func(c config.Collect) (on bool, interval time.Duration)
	// start builds it on r and returns its tick; nil when client cannot
	// make its calls.
	start func(r *runner, client any) func(context.Context)
}

// readers holds every reader, registered by its file's init (register).
var readers []reader

func register(rd reader) { readers = append(readers, rd) }

// runner is what every reader shares: the tick, the budget, the pacing and
// the part's health. Only the reader's goroutine touches it.
type runner struct {
	host     Host
	opts     Options
	logger   *slog.Logger
	part     string
	interval time.Duration
	// limiter paces the calls at the reader's share of the budget; nil
	// without a budget.
	limiter *rate.Limiter
	// unpaced skips the pacing: unit tests drive ticks on a fake clock.
	unpaced bool
	health  fleet.PartHealth
}

func newRunner(host Host, opts Options, part string, interval time.Duration) *runner {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &runner{host: host, opts: opts, logger: opts.Logger, part: part, interval: interval,
		health: fleet.PartHealth{Name: part}}
}

// run calls tick at once and every interval until ctx ends, once the
// state's first cycle has ended.
func (r *runner) run(ctx context.Context, tick func(context.Context)) {
	select {
	case <-ctx.Done():
		return
	case <-r.host.Ready():
	}
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// budgeted reports whether the calls have a budget (a finite rate limit).
func (r *runner) budgeted() bool {
	rl := r.opts.RateLimit
	return rl > 0 && !math.IsInf(rl, 1)
}

// stateRate is the calls per second the state's last cycle planned, or,
// with all, that refreshing every resource takes.
func (r *runner) stateRate(all bool) float64 {
	planned, needed := r.host.StateCalls()
	if all {
		planned = needed
	}
	return float64(planned) / r.opts.Interval.Seconds()
}

// leftRate is the calls per second the budget leaves after the state's.
func (r *runner) leftRate() float64 {
	return r.opts.RateLimit*budgetShare - r.stateRate(false)
}

// setRate paces the calls at limit per second.
func (r *runner) setRate(limit rate.Limit) {
	if r.limiter == nil {
		r.limiter = rate.NewLimiter(limit, 1)
		return
	}
	r.limiter.SetLimit(limit)
}

// pace waits for the reader's share of the budget, then for the state's
// calls to end (they go first); false when ctx ended.
func (r *runner) pace(ctx context.Context) bool {
	if r.limiter != nil && !r.unpaced && r.limiter.Wait(ctx) != nil {
		return false
	}
	return r.host.WaitForState(ctx) == nil
}

// publish publishes the reader's data (fill) and, unless noHealth, the
// part's health: the outcome of a read from start to end with failures.
func (r *runner) publish(fill func(*fleet.Snapshot), start, end time.Time, failures int) {
	h := fleet.PartHealth{Name: r.part, Success: failures == 0, Duration: max(end.Sub(start), 0), LastSuccess: r.health.LastSuccess}
	if h.Success {
		h.LastSuccess = end
	}
	r.health = h
	r.host.PublishPart(r.part, &h, fill)
}

// publishData publishes the reader's data with the health unchanged: a
// read still under way.
func (r *runner) publishData(fill func(*fleet.Snapshot)) {
	r.host.PublishPart(r.part, nil, fill)
}

// flag marks the part failed at once, keeping its data: a read that can
// last hours in an outage need not wait for its end to say so.
func (r *runner) flag(fill func(*fleet.Snapshot)) {
	if !r.health.Success {
		return
	}
	r.health.Success = false
	h := r.health
	r.host.PublishPart(r.part, &h, fill)
}

func (r *runner) now() time.Time { return r.opts.Now() }
