// Package dataplane reads a project's opt-in data plane (usage series, log
// counts) beside the poller, and publishes into its snapshots through Host.
package dataplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// Host is what the readers need of the project's poller.
type Host interface {
	ProjectID() string
	Snapshot() *fleet.Snapshot
	// Ready is closed after the state's first full cycle: the state goes first.
	Ready() <-chan struct{}
	// WaitForState lets the readers never queue behind the state for tokens.
	WaitForState(ctx context.Context) error
	// StateCalls: planned by the last full cycle, and needed to refresh all.
	StateCalls() (planned, needed int)
	// PublishPart runs fill under the poller's lock (it must not call back);
	// a nil health leaves the part's health as it is.
	PublishPart(name string, health *fleet.PartHealth, fill func(*fleet.Snapshot))
}

// Options configure the readers of one project.
type Options struct {
	config.Collect
	// RateLimit of 0 or +Inf means no budget; Burst is the project's (--api.rate-burst).
	RateLimit float64
	Burst     int
	Logger    *slog.Logger
	Now       func() time.Time
	// Positions is shared by every project, each saved under its APIURL.
	Positions *LogPositions
	APIURL    string
	// UsageObserver, when set, sees every bucket the usage reads return.
	UsageObserver *UsageObserver
}

// UsageObserver receives the whole answer of every usage read of the series
// it names, every closed bucket and not only the newest the metrics show
// (rightsizing keeps them over its window).
type UsageObserver struct {
	// Suffixes are the series observed, as apiclient names them.
	Suffixes []string
	// Backfill is how far back the first read of an observed series goes.
	Backfill time.Duration
	Observe  func(serviceID, suffix string, series []apiclient.Series)
}

func (o *UsageObserver) observes(suffix string) bool {
	return o != nil && slices.Contains(o.Suffixes, suffix)
}

// budgetShare is the poller's: the rest is left to retries and admin writes.
const budgetShare = 0.9

// Readers are one project's enabled readers, bound to its client.
type Readers struct {
	opts  Options
	bound []boundReader
}

type boundReader struct {
	part     string
	interval time.Duration
	start    func(r *runner) func(context.Context)
}

// New binds the readers opts enable to client. It fails when client cannot make an
// enabled reader's calls: *apiclient.Client makes every reader's (each reader's file
// checks it when it compiles), so only another client can fail here.
func New(client any, opts Options) (*Readers, error) {
	rs := &Readers{opts: opts}
	var errs []error
	for _, rd := range readers {
		on, interval := rd.enabled(opts.Collect)
		if !on {
			continue
		}
		start, err := rd.bind(client)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rs.bound = append(rs.bound, boundReader{rd.part, interval, start})
	}
	return rs, errors.Join(errs...)
}

// Run starts each reader on its own goroutine; the function it returns waits for them
// to end after ctx does (their last save included).
func (rs *Readers) Run(ctx context.Context, host Host) (wait func()) {
	opts := rs.opts
	if opts.Logger != nil {
		opts.Logger = opts.Logger.With("project_id", host.ProjectID())
	}
	var wg sync.WaitGroup
	for _, b := range rs.bound {
		r := newRunner(host, opts, b.part, b.interval)
		tick := b.start(r)
		wg.Go(func() { r.run(ctx, tick) })
	}
	return wg.Wait
}

// Enabled reports whether c enables the reader of part.
func Enabled(c config.Collect, part string) bool {
	for _, rd := range readers {
		if rd.part == part {
			on, _ := rd.enabled(c)
			return on
		}
	}
	return false
}

// Part is a registered reader's part and its title on the status page.
type Part struct{ Name, Title string }

// Parts lists the registered readers' parts.
func Parts() []Part {
	out := make([]Part, len(readers))
	for i, rd := range readers {
		out[i] = Part{rd.part, rd.title}
	}
	return out
}

type reader struct {
	part, title string
	enabled     func(c config.Collect) (on bool, interval time.Duration)
	// bind fails when client cannot make the reader's calls.
	bind func(client any) (start func(r *runner) func(context.Context), err error)
}

var readers []reader

// register adds a reader from its file's init: its part (the snapshot's key of its data
// and the collector label of its health), its title on the status page, whether a
// project's settings enable it and at what interval, and its start, which returns its
// tick for a client C that makes its calls. Declare C in the reader's file beside
// var _ C = (*apiclient.Client)(nil), so that the exporter's client is checked when it compiles.
func register[C any](part, title string, enabled func(c config.Collect) (on bool, interval time.Duration), start func(r *runner, client C) func(context.Context)) {
	readers = append(readers, reader{part, title, enabled, func(client any) (func(r *runner) func(context.Context), error) {
		c, ok := client.(C)
		if !ok {
			return nil, fmt.Errorf("the %s reader is enabled, but its client (%T) cannot make its calls (%v)", part, client, reflect.TypeFor[C]())
		}
		return func(r *runner) func(context.Context) { return start(r, c) }, nil
	}})
}

// runner is what every reader shares; only the reader's goroutine touches it.
type runner struct {
	host     Host
	opts     Options
	logger   *slog.Logger
	part     string
	interval time.Duration
	limiter  *rate.Limiter
	// credits are tokens of the last batch not yet used (see pace).
	paceMu  sync.Mutex
	credits int
	// unpaced: unit tests drive the ticks on a fake clock.
	unpaced bool
	health  fleet.PartHealth
}

// newRunner fills in opts' defaults (a unit test can leave them zero: Now is time.Now).
func newRunner(host Host, opts Options, part string, interval time.Duration) *runner {
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
	return &runner{host: host, opts: opts, logger: opts.Logger, part: part, interval: interval,
		health: fleet.PartHealth{Name: part}}
}

func (r *runner) run(ctx context.Context, tick func(context.Context)) {
	r.announce()
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

func (r *runner) budgeted() bool {
	rl := r.opts.RateLimit
	return rl > 0 && !math.IsInf(rl, 1)
}

func (r *runner) stateRate(all bool) float64 {
	planned, needed := r.host.StateCalls()
	if all {
		planned = needed
	}
	return float64(planned) / r.opts.Interval.Seconds()
}

func (r *runner) leftRate() float64 {
	return r.opts.RateLimit*budgetShare - r.stateRate(false)
}

// paceBatch bounds a batch of calls in flight-sized rounds: a few rounds a batch
// cut most of the wake-ups, more would only lengthen the bursts.
const paceBatch = 4

func (r *runner) setRate(limit rate.Limit) {
	r.paceMu.Lock()
	defer r.paceMu.Unlock()
	r.credits = 0
	if r.limiter == nil {
		r.limiter = rate.NewLimiter(limit, max(1, min(r.opts.Burst, paceBatch*r.opts.Concurrency)))
		return
	}
	r.limiter.SetLimit(limit)
}

// pace waits for the next call's token. Tokens are taken a batch (the limiter's burst) at a
// time: paced one by one, each call woke an idle process, and at 1,700 calls a second that
// cost 80 µs of CPU a call against 38 in batches of 32.
func (r *runner) pace(ctx context.Context) bool {
	if r.limiter != nil && !r.unpaced && !r.token(ctx) {
		return false
	}
	return r.host.WaitForState(ctx) == nil
}

func (r *runner) token(ctx context.Context) bool {
	r.paceMu.Lock()
	defer r.paceMu.Unlock()
	if r.credits > 0 {
		r.credits--
		return true
	}
	// A batch the deadline cannot wait for still leaves room for one call.
	if n := r.limiter.Burst(); n > 1 && r.limiter.WaitN(ctx, n) == nil {
		r.credits = n - 1
		return true
	}
	return r.limiter.Wait(ctx) == nil
}

func (r *runner) publish(fill func(*fleet.Snapshot), start, end time.Time, failures int) {
	h := fleet.PartHealth{Name: r.part, Success: failures == 0, Duration: max(end.Sub(start), 0), LastSuccess: r.health.LastSuccess}
	if h.Success {
		h.LastSuccess = end
	}
	r.health = h
	r.host.PublishPart(r.part, &h, fill)
}

// announce publishes the part's health before the state's first cycle and
// its first read, which a starved budget makes long: not succeeded yet (0,
// last success 0) rather than no series at all.
func (r *runner) announce() {
	h := r.health
	r.host.PublishPart(r.part, &h, func(*fleet.Snapshot) {})
}

// publishData leaves the health as it is: a read still under way.
func (r *runner) publishData(fill func(*fleet.Snapshot)) {
	r.host.PublishPart(r.part, nil, fill)
}

// flag fails the part at once: a read lasting hours need not wait its end.
func (r *runner) flag(fill func(*fleet.Snapshot)) {
	if !r.health.Success {
		return
	}
	r.health.Success = false
	h := r.health
	r.host.PublishPart(r.part, &h, fill)
}

func (r *runner) now() time.Time { return r.opts.Now() }

// clockSkew is the API's clock minus the exporter's as the project's
// answers tell it (0 before any did): the readers ask for and compare
// times in the API's clock.
func clockSkew(s *fleet.Snapshot) time.Duration {
	if s == nil || !s.ClockSkewKnown {
		return 0
	}
	return s.ClockSkew
}
