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
			Help: "Requests to the admin surface by write operation and the HTTP status code answered, refused and dry-run requests included. Counted by the exporter, not read from the API.",
		}, []string{"operation", "code"}),
		unauthenticated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "clouddb_exporter_admin_unauthenticated_requests_total",
			Help: "Requests to the admin surface refused before they authenticated (missing or wrong credentials, too many failed authentications from the client, or no bcrypt slot free), also counted in clouddb_exporter_admin_requests_total. The audit log records the first of each client per minute in full and the rest as a count. Counted by the exporter, not read from the API.",
		}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "clouddb_exporter_admin_operation_duration_seconds",
			Help: "Time in seconds from an admin request to its operation settling (asynchronous operations: the resource observed READY, active or gone through the poller; synchronous ones: the API's answer), by result. Accepted operations only.",
			// Provisioning takes minutes; synchronous writes well under a second.
			Buckets: []float64{0.5, 1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600},
		}, []string{"operation", "result"}),
		allowed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "clouddb_exporter_admin_allowed_operation_info",
			Help: "1 for each write operation the admin surface permits (--admin.allow); absent while the admin surface is off.",
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
