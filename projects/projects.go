// Package projects runs one API client and one poller per configured
// project, publishes their snapshots to the exposition, and swaps them when
// the configuration is reloaded.
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

// Project is one running project: its configuration, client and poller.
// Config.Credentials are the keys it started with; rotations replace them
// in the client only (see credentials.reread).
type Project struct {
	Config config.Project
	Client *apiclient.Client
	Poller *poller.Poller

	cancel context.CancelFunc
	done   chan struct{}
	creds  *credentials
}

// Publisher receives the snapshots of the running projects: the
// exposition (exposition.Handler) in the exporter.
type Publisher interface {
	// SetSnapshot installs a project's latest snapshot.
	SetSnapshot(s *fleet.Snapshot)
	// RemoveProject drops a project that stopped running.
	RemoveProject(projectID string)
}

// Manager owns the running projects. Its methods are safe for concurrent use.
type Manager struct {
	ctx        context.Context
	logger     *slog.Logger
	apiMetrics *apimetrics.Metrics
	exposition Publisher
	userAgent  string
	// Shard is this process's shard of every project's resources; set it
	// before the first Apply.
	Shard shard.Shard
	// CredentialCheckInterval is how often WatchCredentials re-reads the
	// credential files; 0 means DefaultCredentialCheckInterval. Set it
	// before WatchCredentials starts.
	CredentialCheckInterval time.Duration
	// LogPositions is the log state file every project's log collector
	// resumes from and saves into; nil without one. Set it before the
	// first Apply.
	LogPositions *dataplane.LogPositions

	mu      sync.RWMutex
	running map[string]*Project
	// seq numbers the snapshots of every poller, so that a project's new
	// poller after a reload continues where its predecessor stopped and
	// the exposition can drop snapshots that arrive out of order.
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

// Apply makes the running projects match projects: unchanged ones keep
// running (and keep their rate-limit state and status history), changed ones
// are restarted, gone ones stopped. Every client is built before anything is
// swapped, so a configuration that fails leaves the old one running.
func (m *Manager) Apply(projects []config.Project) error {
	m.mu.Lock()
	defer m.mu.Unlock()

	next := make(map[string]*Project, len(projects))
	var errs []error
	var rotations []func()
	for _, cfg := range projects {
		if old, ok := m.running[cfg.ID]; ok && sameButCredentials(old.Config, cfg) {
			// Only keys changed (a reload after a rotation): the client
			// takes them, and the poller keeps its state.
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
		p := &Project{Config: cfg, Client: client, creds: creds}
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
	dataplane.Run(ctx, p.Poller, p.Client, dataplane.Options{
		Collect: p.Config.Collect, RateLimit: p.Config.API.RateLimit, Logger: m.logger,
		Positions: m.LogPositions, APIURL: p.Config.API.URL,
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

// shortKeys names the keys shorter than apiclient.MinKeyLength, which the
// client does not redact: placeholders, or a key file cut short.
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

// sameButCredentials reports whether two configurations of a project
// differ at most in their keys, with an API key on both or on neither
// (adding or removing one turns the auth collector on or off).
func sameButCredentials(a, b config.Project) bool {
	if (a.Credentials.APIKey == "") != (b.Credentials.APIKey == "") {
		return false
	}
	a.Credentials, b.Credentials = config.Credentials{}, config.Credentials{}
	return reflect.DeepEqual(a, b)
}

// DefaultCredentialCheckInterval is how often WatchCredentials re-reads
// the credential files unless Manager.CredentialCheckInterval says
// otherwise (tests shorten it: --api.credentials-check-interval).
const DefaultCredentialCheckInterval = 10 * time.Second

// WatchCredentials re-reads every project's credential files every
// CredentialCheckInterval until ctx ends, and installs keys that changed
// once two checks in a row read them (a pair written file by file is not
// installed half-rotated):
// a rotated key is picked up without a restart or a reload (Kubernetes
// updates a mounted Secret in place). A file that is empty or unreadable
// mid-rotation is retried at the next check; the old keys stay in use.
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

// checkCredentials is one check of WatchCredentials: every project's keys
// the files hold are installed once they have settled (credentials.settled).
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
		p.Poller.Close()
	}
}

// ClearDeferrals forgets every running project's Retry-After deferrals
// (see poller.Poller.ClearDeferrals).
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

// Ready reports whether every project has finished its first poll cycle
// and none is refused by the API (see NotReady).
func (m *Manager) Ready() bool { return m.NotReady() == "" }

// NotReady says why the exporter is not ready, "" when it is: a project
// whose first poll cycle has not ended, or one the API refuses as
// configured (keys, permissions, URL or project id: fleet.Access.Denied), whose
// metrics would never come without a fix.
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
