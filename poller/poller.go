// Package poller polls one project's API in the background and publishes
// immutable fleet.Snapshots. Per-resource calls share what the lists leave
// of the call budget, transitional and least recently read first. A failure
// never removes what was known; only a successful list or MaxStaleness does.
package poller

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/gate"
	"github.com/clouddb/clouddb_exporter/shard"
)

// Client is the part of *apiclient.Client the poller uses.
type Client interface {
	ProjectID() string
	ReadsAuthInfo() bool
	GetAuthInfo(ctx context.Context) (*apiclient.AuthInfo, error)
	StreamServices(ctx context.Context, begin func(), each func(*apiclient.Service)) error
	GetService(ctx context.Context, serviceID string) (*apiclient.Service, error)
	ListReplicaSets(ctx context.Context, serviceID string) ([]apiclient.ReplicaSet, error)
	ListVPCs(ctx context.Context) ([]apiclient.VPC, error)
	GetVPC(ctx context.Context, vpcID string) (*apiclient.VPC, error)
	ListPeerings(ctx context.Context, vpcID string) ([]apiclient.Peering, error)
	GetPeering(ctx context.Context, vpcID, peeringID string) (*apiclient.Peering, error)
}

// Defaults for Options fields left at zero: the configuration's.
const (
	DefaultInterval           = config.DefaultInterval
	DefaultTransitionInterval = config.DefaultTransitionInterval
	DefaultMaxStaleness       = config.DefaultMaxStaleness
	DefaultConcurrency        = config.DefaultConcurrency
)

// Options configure a Poller.
type Options struct {
	// Collect: zero fields take the configuration's defaults.
	config.Collect
	// RateLimit with Interval makes a cycle's call budget; 0 or +Inf: none.
	RateLimit float64
	Logger    *slog.Logger
	// Publish is called in Seq order, outside the poller's lock. It must not call Close.
	Publish func(*fleet.Snapshot)
	// Sequence is shared by a project's successive pollers so that Seq
	// keeps increasing across a reload; nil gives the Poller its own.
	Sequence    *atomic.Uint64
	Observer    CycleObserver
	ProjectName string
	Now         func() time.Time
	// CredentialsSource and APIURL go into the fix a refused access names.
	CredentialsSource, APIURL string
	// Shard: lists are still read whole, but only owned resources are
	// fetched, followed and published.
	Shard shard.Shard
}

// CycleObserver receives the outcome of full cycles.
type CycleObserver interface {
	// ObserveCycle reports a cycle's duration, the time to refresh every
	// child at the call budget, and whether the cycle overran.
	ObserveCycle(duration, refreshPeriod time.Duration, overrun bool)
	// ObserveRetryAfterCapped reports a Retry-After over the deferral cap
	// (maxDeferral).
	ObserveRetryAfterCapped(operation string)
}

// Poller polls one project. Its methods are safe for concurrent use.
type Poller struct {
	client Client
	opts   Options
	logger *slog.Logger

	// mu guards st, closed and Seq: a snapshot is built and numbered under
	// mu, and published after it is released.
	mu     sync.Mutex
	st     *state
	seq    *atomic.Uint64
	latest atomic.Pointer[fleet.Snapshot]
	// closed is set under both mu and pubMu.
	closed bool
	// pubMu orders Publish calls against each other and against Close.
	pubMu     sync.Mutex
	published uint64

	// warnedCycles and overrunning are touched only by Poll.
	warnedCycles int
	overrunning  bool

	readyOnce sync.Once
	ready     chan struct{}

	// stateCalls and stateNeeded: see StateCalls.
	stateCalls, stateNeeded atomic.Int64
	stateGate               gate.Gate
}

// New returns a Poller for client's project.
func New(client Client, opts Options) *Poller {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.TransitionInterval <= 0 {
		opts.TransitionInterval = DefaultTransitionInterval
	}
	if opts.MaxStaleness < 0 {
		opts.MaxStaleness = DefaultMaxStaleness
	}
	if opts.Sequence == nil {
		opts.Sequence = new(atomic.Uint64)
	}
	if opts.RateLimit < 0 || math.IsNaN(opts.RateLimit) {
		opts.RateLimit = 0
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	logger := opts.Logger.With("project_id", client.ProjectID())
	return &Poller{
		client: client,
		opts:   opts,
		logger: logger,
		st:     newState(logger, opts.Shard.Owns),
		seq:    opts.Sequence,
		ready:  make(chan struct{}),
	}
}

// ProjectID returns the polled project's id.
func (p *Poller) ProjectID() string { return p.client.ProjectID() }

// Snapshot returns the latest snapshot, or nil before the first lists are read.
func (p *Poller) Snapshot() *fleet.Snapshot { return p.latest.Load() }

// Ready is closed when the first full cycle has ended, whatever its outcome.
func (p *Poller) Ready() <-chan struct{} { return p.ready }

// Run polls until ctx is done.
func (p *Poller) Run(ctx context.Context) {
	full := time.NewTicker(p.opts.Interval)
	defer full.Stop()
	transitions := time.NewTicker(p.opts.TransitionInterval)
	defer transitions.Stop()

	p.Poll(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-full.C:
			p.Poll(ctx)
			// A tick due during a long cycle would repeat what it fetched.
			transitions.Reset(p.opts.TransitionInterval)
		case <-transitions.C:
			p.PollTransitions(ctx)
		}
	}
}

// ErrClosed is returned by the Refresh methods of a closed Poller.
var ErrClosed = errors.New("poller: closed")

// Close stops publishing and makes Refresh fail with ErrClosed, so that an
// admin operation tracked across a reload cannot bring back a removed
// project's series or overwrite its successor's.
func (p *Poller) Close() {
	p.pubMu.Lock()
	defer p.pubMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// snapshotLocked returns nil once closed. p.mu must be held; publish the
// result once it is released.
func (p *Poller) snapshotLocked() *fleet.Snapshot {
	if p.closed {
		return nil
	}
	snap := p.st.snapshot(p.client.ProjectID(), p.opts.Now(), p.opts.MaxStaleness)
	snap.Seq = p.seq.Add(1)
	snap.ProjectName = p.opts.ProjectName
	snap.Access = p.st.access
	if c, ok := p.client.(interface{ ClockSkew() (time.Duration, bool) }); ok {
		snap.ClockSkew, snap.ClockSkewKnown = c.ClockSkew()
	}
	snap.Budget = p.st.budget
	p.latest.Store(snap)
	return snap
}

// PublishPart makes every later snapshot hold a data-plane part (fill runs
// under p.mu) and, unless h is nil, its health.
func (p *Poller) PublishPart(name string, h *fleet.PartHealth, fill func(*fleet.Snapshot)) {
	p.mu.Lock()
	p.st.dataParts[name] = fill
	if h != nil {
		p.st.parts[name] = *h
	}
	snap := p.snapshotLocked()
	p.mu.Unlock()
	p.publish(snap)
}

// WaitForState returns once no state calls run, or ctx's error.
func (p *Poller) WaitForState(ctx context.Context) error { return p.stateGate.Wait(ctx) }

// StateCalls is what the last cycle planned and what refreshing everything
// takes: the data plane's readers get the rest of the budget.
func (p *Poller) StateCalls() (planned, needed int) {
	return int(p.stateCalls.Load()), int(p.stateNeeded.Load())
}

// publish drops a snapshot older than the last published (publishers race
// once p.mu is released). It must be called without p.mu held.
func (p *Poller) publish(snap *fleet.Snapshot) {
	if snap == nil || p.opts.Publish == nil {
		return
	}
	p.pubMu.Lock()
	defer p.pubMu.Unlock()
	if p.closed || snap.Seq <= p.published {
		return
	}
	p.published = snap.Seq
	p.opts.Publish(snap)
}

// publishNow returns the latest snapshot when the Poller is closed.
func (p *Poller) publishNow() *fleet.Snapshot {
	p.mu.Lock()
	snap := p.snapshotLocked()
	p.mu.Unlock()
	p.publish(snap)
	if snap == nil {
		return p.latest.Load()
	}
	return snap
}
