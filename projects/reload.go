package projects

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/config"
)

// Reloader re-reads the configuration; a failing one keeps the old running.
type Reloader struct {
	mu      sync.Mutex
	manager *Manager
	load    func() ([]config.Project, error)
	// file is "" when there is nothing to reload.
	file      string
	logger    *slog.Logger
	onRequest []func()

	successful prometheus.Gauge
	lastOK     prometheus.Gauge
}

// NewReloader returns a Reloader; with file "" (--simulate) only the first Reload runs.
func NewReloader(reg prometheus.Registerer, m *Manager, load func() ([]config.Project, error), file string, logger *slog.Logger) *Reloader {
	r := &Reloader{
		manager: m,
		load:    load,
		file:    file,
		logger:  logger,
		successful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clouddb_exporter_config_last_reload_successful",
			Help: "Whether the last configuration load succeeded.",
		}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clouddb_exporter_config_last_reload_success_timestamp_seconds",
			Help: "Time of the last successful configuration load, in Unix seconds.",
		}),
	}
	reg.MustRegister(r.successful, r.lastOK)
	return r
}

// Reload loads and applies the configuration; calls are serialised.
func (r *Reloader) Reload() error { return r.reload(true) }

// Rediscover is Reload without logging success, which would flood the log.
func (r *Reloader) Rediscover() error { return r.reload(false) }

func (r *Reloader) reload(logApplied bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	projects, err := r.load()
	// A failed discovery has its own series and log lines.
	if _, ok := errors.AsType[*discoveryError](err); ok {
		return err
	}
	if err == nil {
		err = r.manager.Apply(projects)
	}
	if err != nil {
		r.successful.Set(0)
		r.logger.Error("Configuration not applied; the previous one stays in use", "err", err)
		return err
	}
	r.successful.Set(1)
	r.lastOK.Set(float64(time.Now().UnixNano()) / 1e9)
	if logApplied {
		r.logger.Info("Configuration applied", "projects", len(projects))
	}
	return nil
}

// OnRequest adds a hook run on every reload request; add hooks before serving.
func (r *Reloader) OnRequest(hook func()) {
	r.onRequest = append(r.onRequest, hook)
}

var errNoConfigFile = errors.New("the simulator's project never changes")

// Requested is an operator's reload: unlike rediscovery, it clears Retry-After deferrals.
func (r *Reloader) Requested() error {
	for _, hook := range r.onRequest {
		hook()
	}
	if r.file == "" {
		return errNoConfigFile
	}
	if err := r.Reload(); err != nil {
		return err
	}
	r.manager.ClearDeferrals()
	return nil
}

// WatchSIGHUP reloads on every SIGHUP until ctx ends.
func (r *Reloader) WatchSIGHUP(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := r.Requested(); errors.Is(err, errNoConfigFile) {
				r.logger.Info("Ignoring SIGHUP: the simulator's project never changes")
			}
		}
	}
}
