package projects

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/config"
)

// Reloader re-reads the configuration and applies it. A configuration that
// fails to load or apply keeps the old one running and is reported.
type Reloader struct {
	mu      sync.Mutex
	manager *Manager
	load    func() ([]config.Project, error)
	logger  *slog.Logger

	successful prometheus.Gauge
	lastOK     prometheus.Gauge
}

// NewReloader returns a Reloader that applies what load returns to m.
func NewReloader(reg prometheus.Registerer, m *Manager, load func() ([]config.Project, error), logger *slog.Logger) *Reloader {
	r := &Reloader{
		manager: m,
		load:    load,
		logger:  logger,
		successful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clouddb_exporter_config_last_reload_successful",
			Help: "Whether the last configuration load succeeded (1) or failed and the previous configuration is still in use (0).",
		}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clouddb_exporter_config_last_reload_success_timestamp_seconds",
			Help: "Unix time of the last successful configuration load.",
		}),
	}
	reg.MustRegister(r.successful, r.lastOK)
	return r
}

// Reload loads and applies the configuration. Concurrent calls are
// serialised.
func (r *Reloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	projects, err := r.load()
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
	r.logger.Info("Configuration applied", "projects", len(projects))
	return nil
}
