// Package projects runs one API client and one poller per configured
// project, publishes their snapshots to the exposition, and swaps them when
// the configuration is reloaded.
package projects

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/poller"
	"github.com/clouddb/clouddb_exporter/shard"
)

// Project is one running project: its configuration, client and poller.
type Project struct {
	Config config.Project
	Client *apiclient.Client
	Poller *poller.Poller

	cancel context.CancelFunc
	done   chan struct{}
}

// Manager owns the running projects. Its methods are safe for concurrent use.
type Manager struct {
	ctx        context.Context
	logger     *slog.Logger
	apiMetrics *collector.APIMetrics
	exposition *collector.Exposition
	userAgent  string
	// Shard is this process's shard of every project's resources; set it
	// before the first Apply.
	Shard shard.Shard

	mu      sync.RWMutex
	running map[string]*Project
	// seq numbers the snapshots of every poller, so that a project's new
	// poller after a reload continues where its predecessor stopped and
	// the exposition can drop snapshots that arrive out of order.
	seq atomic.Uint64
}

// New returns a Manager whose pollers live until ctx is done or Stop.
func New(ctx context.Context, logger *slog.Logger, apiMetrics *collector.APIMetrics, exposition *collector.Exposition, userAgent string) *Manager {
	return &Manager{
		ctx:        ctx,
		logger:     logger,
		apiMetrics: apiMetrics,
		exposition: exposition,
		userAgent:  userAgent,
		running:    map[string]*Project{},
	}
}

// Apply makes the running projects match projects: unchanged ones keep
// running (and keep their rate-limit state and status history), changed ones
// are restarted, gone ones stopped. Every client is built before anything is
// swapped, so a configuration that fails leaves the old one running.
func (m *Manager) Apply(projects []config.Project) error {
	m.mu.Lock()
	defer m.mu.Unlock()

	next := make(map[string]*Project, len(projects))
	var errs []error
	for _, cfg := range projects {
		if old, ok := m.running[cfg.ID]; ok && reflect.DeepEqual(old.Config, cfg) {
			next[cfg.ID] = old
			continue
		}
		clientCfg, err := cfg.ClientConfig()
		if err != nil {
			errs = append(errs, fmt.Errorf("project %s: %w", cfg.ID, err))
			continue
		}
		clientCfg.UserAgent = m.userAgent
		clientCfg.Observer = m.apiMetrics.Observer(cfg.ID)
		client, err := apiclient.New(clientCfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("project %s: %w", cfg.ID, err))
			continue
		}
		next[cfg.ID] = &Project{Config: cfg, Client: client}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}

	for id, old := range m.running {
		if next[id] != old {
			m.stopLocked(old, next[id] == nil)
		}
	}
	for id, p := range next {
		if p.Poller == nil {
			m.start(p)
			m.logger.Info("Polling project", "project_id", id, "api_url", p.Config.API.URL,
				"interval", p.Config.Collect.Interval, "auth_collector", p.Client.HasAPIKey())
		}
	}
	m.running = next
	return nil
}

func (m *Manager) start(p *Project) {
	ctx, cancel := context.WithCancel(m.ctx)
	p.cancel, p.done = cancel, make(chan struct{})
	p.Poller = poller.New(p.Client, poller.Options{
		Interval:           p.Config.Collect.Interval,
		TransitionInterval: p.Config.Collect.TransitionInterval,
		MaxStaleness:       p.Config.Collect.MaxStaleness,
		Concurrency:        p.Config.Collect.Concurrency,
		RateLimit:          p.Config.API.RateLimit,
		Logger:             m.logger,
		Publish:            m.exposition.SetSnapshot,
		Sequence:           &m.seq,
		Observer:           m.apiMetrics.PollObserver(p.Config.ID),
		Shard:              m.Shard,
		ProjectName:        p.Config.Name,
	})
	go func() {
		defer close(p.done)
		p.Poller.Run(ctx)
	}()
}

// stopLocked stops a project's poller and waits for it, so that it cannot
// publish after its series are removed.
func (m *Manager) stopLocked(p *Project, removed bool) {
	p.cancel()
	<-p.done
	p.Poller.Close()
	if removed {
		m.exposition.RemoveProject(p.Config.ID)
		m.apiMetrics.RemoveProject(p.Config.ID)
		m.logger.Info("Stopped polling project", "project_id", p.Config.ID)
	}
}

// Stop stops every poller and waits for them.
func (m *Manager) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.running {
		p.cancel()
		<-p.done
		p.Poller.Close()
	}
}

// Get returns the running project with id.
func (m *Manager) Get(id string) (*Project, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.running[id]
	return p, ok
}

// IDs returns the ids of the running projects, sorted.
func (m *Manager) IDs() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Sorted(maps.Keys(m.running))
}

// Snapshots returns the latest snapshot of every project that has one,
// sorted by project id.
func (m *Manager) Snapshots() []*fleet.Snapshot {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var snaps []*fleet.Snapshot
	for _, id := range slices.Sorted(maps.Keys(m.running)) {
		if s := m.running[id].Poller.Snapshot(); s != nil {
			snaps = append(snaps, s)
		}
	}
	return snaps
}

// Ready reports whether every project has finished its first poll cycle.
func (m *Manager) Ready() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, p := range m.running {
		select {
		case <-p.Poller.Ready():
		default:
			return false
		}
	}
	return len(m.running) > 0
}
