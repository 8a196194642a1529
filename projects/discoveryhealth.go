package projects

import (
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/config"
)

// DiscoveryMetrics are the discovery's own health series: its failures are
// the API's and must not page as a refused configuration.
type DiscoveryMetrics struct {
	success, lastSuccess prometheus.Gauge
}

// NewDiscoveryMetrics registers the discovery's series on reg.
func NewDiscoveryMetrics(reg prometheus.Registerer) *DiscoveryMetrics {
	m := &DiscoveryMetrics{
		success: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clouddb_exporter_discovery_success",
			Help: "Whether the last project discovery (GET /projects) succeeded.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clouddb_exporter_discovery_last_success_timestamp_seconds",
			Help: "Time of the last successful project discovery, in Unix seconds.",
		}),
	}
	reg.MustRegister(m.success, m.lastSuccess)
	return m
}

// discoveryError lets the reloader tell a failed discovery from a bad configuration.
type discoveryError struct{ err error }

func (e *discoveryError) Error() string { return e.err.Error() }
func (e *discoveryError) Unwrap() error { return e.err }

// discoveryHealth lets the discovery log changes rather than every cycle.
type discoveryHealth struct {
	failing bool
	known   []string // the ids found last, sorted; nil before the first success
	found   bool     // a discovery has succeeded
}

func (h *discoveryHealth) record(logger *slog.Logger, m *DiscoveryMetrics, now time.Time, found []config.Project, err error) {
	if err != nil {
		if m != nil {
			m.success.Set(0)
		}
		if h.failing {
			logger.Debug("Project discovery still failing", "err", err)
			return
		}
		h.failing = true
		logger.Error("Project discovery failed; the projects found before keep being polled, none is added or removed until it succeeds", "projects", len(h.known), "err", err)
		return
	}
	if m != nil {
		m.success.Set(1)
		m.lastSuccess.Set(float64(now.UnixNano()) / 1e9)
	}
	ids := make([]string, len(found))
	for i, p := range found {
		ids[i] = p.ID
	}
	if h.failing {
		h.failing = false
		logger.Info("Project discovery recovered", "projects", len(ids))
	}
	if h.found && slices.Equal(ids, h.known) {
		return
	}
	added, removed := diffIDs(h.known, ids)
	h.known, h.found = ids, true
	logger.Info("Projects discovered", "projects", len(ids), "added", added, "removed", removed)
}

func diffIDs(a, b []string) (added, removed []string) {
	added, removed = []string{}, []string{}
	for _, id := range b {
		if !slices.Contains(a, id) {
			added = append(added, id)
		}
	}
	for _, id := range a {
		if !slices.Contains(b, id) {
			removed = append(removed, id)
		}
	}
	return added, removed
}
