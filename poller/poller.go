// Package poller polls one project's resources from the API in the
// background and publishes immutable fleet.Snapshots. Scrapes never reach the
// API: they read the latest snapshot.
//
// A full cycle runs every Interval, within a deadline of one Interval: list
// services, VPCs and the auth info, publish, then list the replica sets of
// services and the peerings of VPCs with bounded fan-out, publishing in
// batches as they arrive. The lists run every cycle; the per-resource calls
// share what is left of the call budget (RateLimit x Interval), transitional
// resources first, then the least recently refreshed, so that a fleet too
// large for one interval is refreshed completely every few cycles instead of
// overrunning. Between cycles, resources in a transitional state are followed
// every TransitionInterval through the get endpoints (replica sets, which
// have no get, through their service's list), so that a change is seen
// within seconds. Any caller may ask for the immediate refresh of one
// resource.
//
// A failure never removes what was known: a resource disappears when a
// successful list no longer has it. With a MaxStaleness, a resource whose
// refresh has failed for longer than that since its last good read is
// dropped instead.
package poller

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"slices"
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

// Defaults for Options fields left at their zero value: the configuration's.
const (
	DefaultInterval           = config.DefaultInterval
	DefaultTransitionInterval = config.DefaultTransitionInterval
	DefaultMaxStaleness       = config.DefaultMaxStaleness
	DefaultConcurrency        = config.DefaultConcurrency
)

// Options configure a Poller.
type Options struct {
	// Collect is the project's collect settings, as the configuration
	// resolved them; zero fields take the configuration's defaults.
	config.Collect
	// RateLimit is the API client's rate limit in requests per second;
	// with Interval it makes the call budget of a cycle. 0 or +Inf means
	// no budget: every resource every cycle.
	RateLimit float64
	Logger    *slog.Logger
	// Publish receives new snapshots, one call at a time and in
	// increasing Seq order, outside the poller's lock: rendering does not
	// hold up fetches. It must not call Close.
	Publish func(*fleet.Snapshot)
	// Sequence numbers the snapshots. Pollers that publish to one place
	// share one, so that a project's new poller (after a reload) continues
	// its predecessor's numbers; nil gives the Poller its own.
	Sequence *atomic.Uint64
	// Observer, when set, receives the outcome of every full cycle.
	Observer CycleObserver
	// ProjectName is the project's name, when discovery found it; it goes
	// into every snapshot.
	ProjectName string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// CredentialsSource names where the project's key pair comes from and
	// APIURL is the API's base URL: the fix a refused access names.
	CredentialsSource, APIURL string
	// Shard, when set, keeps only the services and VPCs (with their
	// replica sets and peerings) whose id hashes to it: the lists are still
	// read whole, but only those resources are fetched, followed and
	// published. The zero value keeps everything.
	Shard shard.Shard
}

// CycleObserver receives the outcome of full cycles.
type CycleObserver interface {
	// ObserveCycle reports a cycle's duration, the time it takes to
	// refresh every child resource at the call budget, and whether the
	// cycle overran its interval.
	ObserveCycle(duration, refreshPeriod time.Duration, overrun bool)
	// ObserveRetryAfterCapped reports a Retry-After of operation longer
	// than MaxDeferral.
	ObserveRetryAfterCapped(operation string)
}

// Poller polls one project. Its methods are safe for concurrent use.
type Poller struct {
	client Client
	opts   Options
	logger *slog.Logger

	// mu guards st, closed and the sequence of snapshots: a snapshot is
	// built and numbered under mu, and published after it is released.
	mu     sync.Mutex
	st     *state
	seq    *atomic.Uint64
	latest atomic.Pointer[fleet.Snapshot]
	// closed is set by Close, under both mu and pubMu.
	closed bool
	// pubMu serialises Publish calls and orders them against Close;
	// published is the Seq of the last snapshot handed to Publish.
	pubMu     sync.Mutex
	published uint64

	// warnedCycles is the refresh period, in cycles, last logged; only
	// Poll touches it.
	warnedCycles int
	// overrunning is whether the last cycle overran; only Poll touches it.
	overrunning bool

	readyOnce sync.Once
	ready     chan struct{}

	// stateCalls is how many calls the last full cycle planned (lists and
	// per-resource calls); stateNeeded is how many refreshing every
	// resource takes (see StateCalls).
	stateCalls, stateNeeded atomic.Int64
	// stateGate is held while state calls run: the data plane's calls wait
	// for it (see WaitForState).
	stateGate gate.Gate
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

// Snapshot returns the latest snapshot, or nil before the first lists of
// the first cycle are read.
func (p *Poller) Snapshot() *fleet.Snapshot { return p.latest.Load() }

// Ready is closed when the first full cycle has ended, whatever its
// outcome: within one Interval, the cycle's deadline. Snapshots are
// published before, as the cycle reads.
func (p *Poller) Ready() <-chan struct{} { return p.ready }

// Run polls until ctx is done: a full cycle at once and every Interval, and
// the transition follow-up every TransitionInterval in between.
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
			// A transition tick that fell due during a long cycle would
			// only repeat what the cycle just fetched.
			transitions.Reset(p.opts.TransitionInterval)
		case <-transitions.C:
			p.PollTransitions(ctx)
		}
	}
}

// ErrClosed is returned by the Refresh methods of a closed Poller.
var ErrClosed = errors.New("poller: closed")

// Close stops the Poller from publishing and makes its Refresh methods fail
// with ErrClosed. Call it once Run has returned, when the project is
// removed or replaced: a caller still holding the Poller (an admin
// operation being tracked across a reload) must not bring back the series
// of a project that is gone, nor overwrite those of its successor.
func (p *Poller) Close() {
	p.pubMu.Lock()
	defer p.pubMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// snapshotLocked builds and numbers a snapshot of the state, unless the
// Poller is closed (then it returns nil). p.mu must be held; hand the
// result to publish once p.mu is released.
func (p *Poller) snapshotLocked() *fleet.Snapshot {
	if p.closed {
		return nil
	}
	snap := p.st.snapshot(p.client.ProjectID(), p.opts.Now(), p.opts.MaxStaleness)
	snap.Seq = p.seq.Add(1)
	snap.ProjectName = p.opts.ProjectName
	snap.Access = p.st.access
	snap.Budget = p.st.budget
	p.latest.Store(snap)
	return snap
}

// PublishPart makes every snapshot from now on hold a data-plane part's
// data (fill sets its field, under p.mu) and, unless h is nil, its
// health, and publishes a snapshot with them.
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

// dataPartOrder lists the data plane's parts: usage and logs first, as
// they always came, then any other in name order.
func dataPartOrder(parts map[string]func(*fleet.Snapshot)) []string {
	order := []string{fleet.PartUsage, fleet.PartLogs}
	for _, name := range sortedKeys(parts) {
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	return order
}

// WaitForState returns once no state calls run, or ctx's error.
func (p *Poller) WaitForState(ctx context.Context) error { return p.stateGate.Wait(ctx) }

// StateCalls is how many calls the last full cycle planned (lists and
// per-resource calls), and how many refreshing every resource takes: what
// the data plane's readers leave them of the call budget.
func (p *Poller) StateCalls() (planned, needed int) {
	return int(p.stateCalls.Load()), int(p.stateNeeded.Load())
}

// publish hands snap to Publish, unless it is nil, the Poller is closed, or
// a later snapshot was published meanwhile (two publishers raced after
// releasing p.mu). It must be called without p.mu held.
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

// publishNow builds a snapshot of the state and publishes it, returning it
// (or the latest one when the Poller is closed).
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
