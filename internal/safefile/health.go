package safefile

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Health publishes the health of the exporter's state files, one series
// each by the state_file label: whether the file is kept, when it was last
// written, the writes that failed and the files refused.
type Health struct {
	healthy   *prometheus.GaugeVec
	lastWrite *prometheus.GaugeVec
	failures  *prometheus.CounterVec
	refused   *prometheus.CounterVec
}

// NewHealth registers the state files' metrics on reg (nil: none).
func NewHealth(reg prometheus.Registerer) *Health {
	h := &Health{
		healthy: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "clouddb_exporter_state_file_healthy",
			Help: "Whether the state file was read and its last write succeeded.",
		}, []string{"state_file"}),
		lastWrite: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "clouddb_exporter_state_file_last_write_timestamp_seconds",
			Help: "Time of the last successful write of the state file, in Unix seconds.",
		}, []string{"state_file"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_state_file_write_failures_total",
			Help: "Writes of the state file that failed.",
		}, []string{"state_file"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_state_file_refused_total",
			Help: "State files refused at start and moved aside.",
		}, []string{"state_file"}),
	}
	if reg != nil {
		reg.MustRegister(h.healthy, h.lastWrite, h.failures, h.refused)
	}
	return h
}

// Start serves the file's series, healthy or not after its read at start.
func (h *Health) Start(file string, healthy bool) {
	if h == nil {
		return
	}
	h.healthy.WithLabelValues(file).Set(boolValue(healthy))
	h.lastWrite.WithLabelValues(file)
	h.failures.WithLabelValues(file)
	h.refused.WithLabelValues(file)
}

// Refused counts a file moved aside.
func (h *Health) Refused(file string) {
	if h != nil {
		h.refused.WithLabelValues(file).Inc()
	}
}

// Written records the outcome of a write.
func (h *Health) Written(file string, err error, now time.Time) {
	if h == nil {
		return
	}
	h.healthy.WithLabelValues(file).Set(boolValue(err == nil))
	if err != nil {
		h.failures.WithLabelValues(file).Inc()
		return
	}
	h.lastWrite.WithLabelValues(file).Set(float64(now.UnixNano()) / 1e9)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
