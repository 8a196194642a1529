// Package poller polls one project's resources from the API in the
// background and publishes immutable fleet.Snapshots. Scrapes never reach the
// API: they read the latest snapshot.
//
// A full cycle runs every Interval: list services, VPCs and the auth info,
// then list the replica sets of every service and the peerings of every VPC
// with bounded fan-out. Between cycles, resources in a transitional state are
// followed every TransitionInterval through the get endpoints (replica sets,
// which have no get, through their service's list), so that a change is seen
// within seconds. Any caller may ask for the immediate refresh of one
// resource.
//
// A part that fails keeps its last good data for at most MaxStaleness; after
// that its resources are dropped rather than reported as if current.
package poller

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// Client is the part of *apiclient.Client the poller uses.
type Client interface {
	ProjectID() string
	HasAPIKey() bool
	GetAuthInfo(ctx context.Context) (*apiclient.AuthInfo, error)
	ListServices(ctx context.Context) ([]apiclient.Service, error)
	GetService(ctx context.Context, serviceID string) (*apiclient.Service, error)
	ListReplicaSets(ctx context.Context, serviceID string) ([]apiclient.ReplicaSet, error)
	ListVPCs(ctx context.Context) ([]apiclient.VPC, error)
	GetVPC(ctx context.Context, vpcID string) (*apiclient.VPC, error)
	ListPeerings(ctx context.Context, vpcID string) ([]apiclient.Peering, error)
	GetPeering(ctx context.Context, vpcID, peeringID string) (*apiclient.Peering, error)
}

// Defaults for Options fields left at their zero value.
const (
	DefaultInterval           = 60 * time.Second
	DefaultTransitionInterval = 10 * time.Second
	DefaultMaxStaleness       = 5 * time.Minute
	DefaultConcurrency        = 4
)

// Options configure a Poller.
type Options struct {
	Interval           time.Duration
	TransitionInterval time.Duration
	MaxStaleness       time.Duration
	// Concurrency bounds how many API calls one cycle has in flight.
	Concurrency int
	Logger      *slog.Logger
	// Publish receives every new snapshot, in order. It runs with the
	// poller's lock held, so it must not call back into the Poller.
	Publish func(*fleet.Snapshot)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Poller polls one project. Its methods are safe for concurrent use.
type Poller struct {
	client Client
	opts   Options
	logger *slog.Logger

	// mu guards st and orders publication, so that snapshots are published
	// in the order they are built.
	mu     sync.Mutex
	st     *state
	latest atomic.Pointer[fleet.Snapshot]
	// closed is set by Close; guarded by mu.
	closed bool

	readyOnce sync.Once
	ready     chan struct{}
}

// New returns a Poller for client's project.
func New(client Client, opts Options) *Poller {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.TransitionInterval <= 0 {
		opts.TransitionInterval = DefaultTransitionInterval
	}
	if opts.MaxStaleness <= 0 {
		opts.MaxStaleness = DefaultMaxStaleness
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
		st:     newState(logger),
		ready:  make(chan struct{}),
	}
}

// ProjectID returns the polled project's id.
func (p *Poller) ProjectID() string { return p.client.ProjectID() }

// Snapshot returns the latest snapshot, or nil before the first cycle ends.
func (p *Poller) Snapshot() *fleet.Snapshot { return p.latest.Load() }

// Ready is closed when the first full cycle has ended, whatever its outcome.
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
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// publishLocked builds a snapshot from the state and publishes it, unless
// the Poller is closed. p.mu must be held.
func (p *Poller) publishLocked() *fleet.Snapshot {
	if p.closed {
		return p.latest.Load()
	}
	snap := p.st.snapshot(p.client.ProjectID(), p.opts.Now(), p.opts.MaxStaleness)
	p.latest.Store(snap)
	if p.opts.Publish != nil {
		p.opts.Publish(snap)
	}
	return snap
}
