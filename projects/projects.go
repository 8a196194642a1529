// Package projects runs an API client and a poller per project, swapped on reload.
package projects

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/poller"
	"github.com/clouddb/clouddb_exporter/shard"
)

// Project is one running project. Rotations replace Config.Credentials in the client only.
type Project struct {
	Config config.Project
	Client *apiclient.Client
	Poller *poller.Poller

	cancel context.CancelFunc
	done   chan struct{}
	// dataPlane are its readers, bound to Client; readers waits for them to end.
	dataPlane *dataplane.Readers
	readers   func()
	creds     *credentials
}

// Publisher receives the running projects' snapshots (the exposition).
type Publisher interface {
	SetSnapshot(s *fleet.Snapshot)
	RemoveProject(projectID string)
}

// Manager owns the running projects. Its methods are safe for concurrent use.
type Manager struct {
	ctx        context.Context
	logger     *slog.Logger
	apiMetrics *apimetrics.Metrics
	exposition Publisher
	userAgent  string
	// Set Shard and LogPositions before the first Apply, and
	// CredentialCheckInterval (0: the default) before WatchCredentials.
	Shard                   shard.Shard
	CredentialCheckInterval time.Duration
	LogPositions            *dataplane.LogPositions
	// UsageObserver, when set before the first Apply, returns the observer
	// of a project's usage reads (rightsizing).
	UsageObserver func(projectID string) *dataplane.UsageObserver
	// OnApply, when set, is told the running projects' ids after each
	// successful Apply (the change timeline's added and removed).
	OnApply func(ids []string)
	// OnLogEntries, when set, sees every page of log entries the data
	// plane's log reader reads (the change timeline's restarts).
	OnLogEntries func(projectID, serviceID string, entries []apiclient.LogEntry)

	mu      sync.RWMutex
	running map[string]*Project
	// seq is shared so a reloaded project's Seq keeps increasing.
	seq atomic.Uint64
}

// New returns a Manager whose pollers live until ctx is done or Stop.
func New(ctx context.Context, logger *slog.Logger, apiMetrics *apimetrics.Metrics, exposition Publisher, userAgent string) *Manager {
	return &Manager{
		ctx:        ctx,
		logger:     logger,
		apiMetrics: apiMetrics,
		exposition: exposition,
		userAgent:  userAgent,
		running:    map[string]*Project{},
	}
}

// Apply keeps unchanged projects running and builds every client before
// swapping anything, so a failing configuration leaves the old one running.
func (m *Manager) Apply(projects []config.Project) error {
	m.mu.Lock()
	defer m.mu.Unlock()

	next := make(map[string]*Project, len(projects))
	var errs []error
	var rotations []func()
	for _, cfg := range projects {
		if old, ok := m.running[cfg.ID]; ok && sameButCredentials(old.Config, cfg) {
			// Only keys changed: the poller keeps its state.
			next[cfg.ID] = old
			rotations = append(rotations, func() { old.creds.install(cfg.Credentials, "reload") })
			continue
		}
		clientCfg, err := cfg.ClientConfig()
		if err != nil {
			errs = append(errs, fmt.Errorf("project %s: %w", cfg.ID, err))
			continue
		}
		clientCfg.UserAgent = m.userAgent
		clientCfg.Observer = m.apiMetrics.Observer(cfg.ID)
		clientCfg.Logger = m.logger.With("project_id", cfg.ID)
		creds := &credentials{cur: cfg.Credentials, logger: m.logger.With("project_id", cfg.ID)}
		clientCfg.OnUnauthorized = func() bool { return creds.reread("unauthorized") }
		client, err := apiclient.New(clientCfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("project %s: %w", cfg.ID, err))
			continue
		}
		creds.client = client
		dp, err := dataplane.New(m.readersClient(cfg.ID, client), dataplane.Options{
			Collect: cfg.Collect, RateLimit: cfg.API.RateLimit, Burst: cfg.API.Burst, Logger: m.logger,
			Positions: m.LogPositions, APIURL: cfg.API.URL, UsageObserver: m.usageObserver(cfg.ID),
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("project %s: %w", cfg.ID, err))
			continue
		}
		p := &Project{Config: cfg, Client: client, creds: creds, dataPlane: dp}
		next[cfg.ID] = p
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, rotate := range rotations {
		rotate()
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
				"interval", p.Config.Collect.Interval, "auth_collector", p.Client.ReadsAuthInfo())
			if short := shortKeys(p.Config.Credentials); len(short) > 0 {
				m.logger.Warn("API keys too short to be real keys; they are not redacted from the API's answers",
					"project_id", id, "keys", strings.Join(short, ","), "min_length", apiclient.MinKeyLength)
			}
		}
	}
	m.running = next
	if m.OnApply != nil {
		m.OnApply(slices.Sorted(maps.Keys(next)))
	}
	return nil
}

func (m *Manager) start(p *Project) {
	ctx, cancel := context.WithCancel(m.ctx)
	p.cancel, p.done = cancel, make(chan struct{})
	p.Poller = poller.New(p.Client, poller.Options{
		Collect:     p.Config.Collect,
		RateLimit:   p.Config.API.RateLimit,
		Logger:      m.logger,
		Publish:     m.exposition.SetSnapshot,
		Sequence:    &m.seq,
		Observer:    m.apiMetrics.PollObserver(p.Config.ID),
		Shard:       m.Shard,
		ProjectName: p.Config.Name,

		CredentialsSource: p.Config.Credentials.Source,
		APIURL:            p.Config.API.URL,
	})
	p.readers = p.dataPlane.Run(ctx, p.Poller)
	go func() {
		defer close(p.done)
		p.Poller.Run(ctx)
	}()
}

// stopLocked waits for the poller and the readers, so that none publishes after the series
// are removed and the log reader's last positions are saved before the state file closes.
func (m *Manager) stopLocked(p *Project, removed bool) {
	p.cancel()
	<-p.done
	p.readers()
	p.Poller.Close()
	if removed {
		m.exposition.RemoveProject(p.Config.ID)
		m.apiMetrics.RemoveProject(p.Config.ID)
		m.logger.Info("Stopped polling project", "project_id", p.Config.ID)
	}
}

// shortKeys names keys too short for the client to redact.
func shortKeys(c config.Credentials) []string {
	var short []string
	for _, k := range []struct {
		name string
		v    apiclient.Secret
	}{{"access_key", c.AccessKey}, {"secret_key", c.SecretKey}, {"api_key", c.APIKey}} {
		if k.v != "" && len(k.v) < apiclient.MinKeyLength {
			short = append(short, k.name)
		}
	}
	return short
}

// sameButCredentials: adding or removing an API key toggles the auth collector.
func sameButCredentials(a, b config.Project) bool {
	if (a.Credentials.APIKey == "") != (b.Credentials.APIKey == "") {
		return false
	}
	a.Credentials, b.Credentials = config.Credentials{}, config.Credentials{}
	return reflect.DeepEqual(a, b)
}

// DefaultCredentialCheckInterval is the default of Manager.CredentialCheckInterval.
const DefaultCredentialCheckInterval = 10 * time.Second

// WatchCredentials picks up rotated key files (a Secret updated in place).
func (m *Manager) WatchCredentials(ctx context.Context) {
	t := time.NewTicker(cmp.Or(m.CredentialCheckInterval, DefaultCredentialCheckInterval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.checkCredentials()
	}
}

func (m *Manager) checkCredentials() {
	m.mu.RLock()
	running := slices.Collect(maps.Values(m.running))
	m.mu.RUnlock()
	for _, p := range running {
		p.creds.settled("file changed")
	}
}

// Stop stops every poller and waits for them.
func (m *Manager) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.running {
		p.cancel()
		<-p.done
		p.readers()
		p.Poller.Close()
	}
}

// ClearDeferrals forgets every running project's Retry-After deferrals.
func (m *Manager) ClearDeferrals() {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, p := range m.running {
		p.Poller.ClearDeferrals()
	}
}

// Get returns the running project with id.
func (m *Manager) Get(id string) (*Project, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.running[id]
	return p, ok
}

// Snapshots returns the latest snapshots, sorted by project id.
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

// NotReady says why not ready: a first cycle not ended, or access denied.
func (m *Manager) NotReady() string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.running) == 0 {
		return "no project is running"
	}
	for _, id := range slices.Sorted(maps.Keys(m.running)) {
		p := m.running[id]
		select {
		case <-p.Poller.Ready():
		default:
			return "the first poll cycle of project " + id + " has not finished"
		}
		if a := p.Poller.Access(); a.Denied() {
			return "the API refuses project " + id + " (" + a.Cause + "): see the exporter's log for the fix"
		}
	}
	return ""
}

func (m *Manager) usageObserver(projectID string) *dataplane.UsageObserver {
	if m.UsageObserver == nil {
		return nil
	}
	return m.UsageObserver(projectID)
}

// readersClient is client, whose log pages OnLogEntries sees first.
func (m *Manager) readersClient(projectID string, client *apiclient.Client) any {
	if m.OnLogEntries == nil {
		return client
	}
	return watchedLogs{Client: client, project: projectID, on: m.OnLogEntries}
}

// watchedLogs is the client with its log pages shown to on.
type watchedLogs struct {
	*apiclient.Client
	project string
	on      func(projectID, serviceID string, entries []apiclient.LogEntry)
}

func (c watchedLogs) GetServiceLogs(ctx context.Context, serviceID string, q apiclient.LogsQuery) (*apiclient.LogPage, error) {
	page, err := c.Client.GetServiceLogs(ctx, serviceID, q)
	if err == nil && page != nil {
		c.on(c.project, serviceID, page.Entries)
	}
	return page, err
}
