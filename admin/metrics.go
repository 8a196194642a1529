package admin

import (
	"github.com/prometheus/client_golang/prometheus"
)

const (
	resultSucceeded = "succeeded"
	resultFailed    = "failed"
	resultTimedOut  = "timed_out"
)

type metrics struct {
	requests        *prometheus.CounterVec
	unauthenticated prometheus.Counter
	duration        *prometheus.HistogramVec
	allowed         *prometheus.GaugeVec
}

// newMetrics does not pre-initialise the counters: a zero for an operation
// nobody called says nothing an absent series does not. The allowed
// operations show the dashboards a running surface before its first request.
func newMetrics(reg prometheus.Registerer, allowed []string) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_admin_requests_total",
			Help: "Requests to the admin surface, by operation and HTTP status code.",
		}, []string{"operation", "code"}),
		unauthenticated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "clouddb_exporter_admin_unauthenticated_requests_total",
			Help: "Requests to the admin surface refused before they authenticated.",
		}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "clouddb_exporter_admin_operation_duration_seconds",
			Help: "Time from an accepted admin request to its operation settling, in seconds.",
			// Provisioning takes minutes; synchronous writes well under a second.
			Buckets: []float64{0.5, 1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600},
		}, []string{"operation", "result"}),
		allowed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "clouddb_exporter_admin_allowed_operation_info",
			Help: "A write operation the admin surface permits, value 1.",
		}, []string{"operation"}),
	}
	for _, op := range allowed {
		m.allowed.WithLabelValues(op).Set(1)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.requests, m.unauthenticated, m.duration, m.allowed} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
