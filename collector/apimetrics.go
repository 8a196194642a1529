package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// apiDurationBuckets suit a REST control plane: tens of milliseconds for a
// quick read up to the client's 30 s default attempt timeout.
var apiDurationBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// APIMetrics holds the exporter's self-metrics about its use of the cloud
// API, fed by the API clients of every project through Observer. It is safe
// for concurrent use.
type APIMetrics struct {
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	retries       *prometheus.CounterVec
	rateLimitWait *prometheus.CounterVec
}

// NewAPIMetrics creates the API self-metrics and registers them with reg,
// unless reg is nil. It panics if they are already registered there, like
// prometheus.MustRegister.
func NewAPIMetrics(reg prometheus.Registerer) *APIMetrics {
	m := &APIMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_requests_total",
			Help: "HTTP attempts made to the cloud API, by operation and HTTP status code (error for a transport error or timeout). Each retry counts as an attempt.",
		}, []string{"project_id", "operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "clouddb_exporter_api_request_duration_seconds",
			Help:    "Duration of HTTP attempts to the cloud API in seconds, by operation, whatever their outcome.",
			Buckets: apiDurationBuckets,
		}, []string{"project_id", "operation"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_retries_total",
			Help: "Attempts to the cloud API that were retried, by operation.",
		}, []string{"project_id", "operation"}),
		rateLimitWait: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_rate_limit_wait_seconds_total",
			Help: "Time requests to the cloud API spent waiting for the client's own rate limiter, in seconds.",
		}, []string{"project_id"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.retries, m.rateLimitWait)
	}
	return m
}

// Observer returns the apiclient.Observer for the client of one project.
// It creates the project's retry series for every operation and its
// rate-limit wait series at 0, so that rate() and increase() see the first
// retry or wait instead of a series appearing out of nothing. Request and
// duration series appear with the first attempt, since the status code is
// not known before.
func (m *APIMetrics) Observer(projectID string) apiclient.Observer {
	project := prometheus.Labels{"project_id": projectID}
	o := &apiObserver{
		requests: m.requests.MustCurryWith(project),
		duration: m.duration.MustCurryWith(project),
		retries:  m.retries.MustCurryWith(project),
		wait:     m.rateLimitWait.WithLabelValues(projectID),
	}
	for _, op := range apiclient.Operations {
		o.retries.WithLabelValues(op)
	}
	return o
}

// RemoveProject deletes every series of a project, for a project dropped by
// a configuration reload. Call it after the project's client has stopped:
// an Observer still in use would create the series again.
func (m *APIMetrics) RemoveProject(projectID string) {
	project := prometheus.Labels{"project_id": projectID}
	m.requests.DeletePartialMatch(project)
	m.duration.DeletePartialMatch(project)
	m.retries.DeletePartialMatch(project)
	m.rateLimitWait.DeletePartialMatch(project)
}

// apiObserver is the Observer of one project: its vectors are curried with
// the project's id.
type apiObserver struct {
	requests *prometheus.CounterVec
	duration prometheus.ObserverVec
	retries  *prometheus.CounterVec
	wait     prometheus.Counter
}

// ObserveRequest implements apiclient.Observer.
func (o *apiObserver) ObserveRequest(operation, code string, duration time.Duration) {
	o.requests.WithLabelValues(operation, code).Inc()
	o.duration.WithLabelValues(operation).Observe(duration.Seconds())
}

// ObserveRetry implements apiclient.Observer.
func (o *apiObserver) ObserveRetry(operation string) {
	o.retries.WithLabelValues(operation).Inc()
}

// ObserveRateLimitWait implements apiclient.Observer.
func (o *apiObserver) ObserveRateLimitWait(_ string, wait time.Duration) {
	o.wait.Add(wait.Seconds())
}
