// Package apimetrics holds the exporter's self-metrics about its use of the cloud API.
package apimetrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// apiDurationBuckets reach the client's 30 s default attempt timeout.
var apiDurationBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Metrics holds the API self-metrics of every project. It is safe for concurrent use.
type Metrics struct {
	requests         *prometheus.CounterVec
	duration         *prometheus.HistogramVec
	retries          *prometheus.CounterVec
	rateLimitWait    *prometheus.CounterVec
	decodeErrors     *prometheus.CounterVec
	listsTooLong     *prometheus.CounterVec
	textsCut         *prometheus.CounterVec
	retryAfterCapped *prometheus.CounterVec
	cycleDuration    *prometheus.GaugeVec
	refreshPeriod    *prometheus.GaugeVec
	overruns         *prometheus.CounterVec

	// own holds the vectors whatever reg is, so Gather can serve them alone.
	own *prometheus.Registry
	// generation counts changes: an encoding stays valid while it does not move.
	generation atomic.Uint64
	// removals: a removed project's series must leave at once.
	removals atomic.Uint64
}

// New registers the metrics with reg unless nil, panicking on a duplicate.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_requests_total",
			Help: "HTTP requests sent to the cloud API, by operation and outcome.",
		}, []string{"project_id", "operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "clouddb_exporter_api_request_duration_seconds",
			Help:    "Duration of HTTP attempts to the cloud API, in seconds.",
			Buckets: apiDurationBuckets,
		}, []string{"project_id", "operation"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_retries_total",
			Help: "Attempts to the cloud API that were retried.",
		}, []string{"project_id", "operation"}),
		rateLimitWait: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_rate_limit_wait_seconds_total",
			Help: "Time API requests waited for the client-side rate limit, in seconds.",
		}, []string{"project_id"}),
		decodeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_decode_errors_total",
			Help: "Fields of successful API answers that did not decode and were left out.",
		}, []string{"project_id", "operation"}),
		listsTooLong: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_lists_too_long_total",
			Help: "API list answers longer than --collect.max-resources-per-list.",
		}, []string{"project_id", "operation"}),
		textsCut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_texts_truncated_total",
			Help: "Texts of API answers cut to 1024 bytes.",
		}, []string{"project_id", "operation"}),
		retryAfterCapped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_api_retry_after_capped_total",
			Help: "API Retry-After answers over 15 minutes, waited for 15 minutes only.",
		}, []string{"project_id", "operation"}),
		cycleDuration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "clouddb_exporter_poll_cycle_duration_seconds",
			Help: "Duration of the last full poll cycle of a project, in seconds.",
		}, []string{"project_id"}),
		refreshPeriod: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "clouddb_exporter_poll_children_refresh_period_seconds",
			Help: "Time to refresh every replica set and peering list of a project, in seconds.",
		}, []string{"project_id"}),
		overruns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clouddb_exporter_poll_cycle_overruns_total",
			Help: "Poll cycles of a project that outran the poll interval.",
		}, []string{"project_id"}),
	}
	m.own = prometheus.NewRegistry()
	m.own.MustRegister(m.collectors()...)
	if reg != nil {
		reg.MustRegister(m.collectors()...)
	}
	return m
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.duration, m.retries, m.rateLimitWait, m.decodeErrors, m.listsTooLong, m.textsCut,
		m.retryAfterCapped, m.cycleDuration, m.refreshPeriod, m.overruns}
}

// IsAPIMetric reports whether name is one of the families of Metrics.
func IsAPIMetric(name string) bool {
	switch name {
	case "clouddb_exporter_api_requests_total", "clouddb_exporter_api_request_duration_seconds",
		"clouddb_exporter_api_retries_total", "clouddb_exporter_api_rate_limit_wait_seconds_total",
		"clouddb_exporter_api_decode_errors_total", "clouddb_exporter_api_lists_too_long_total",
		"clouddb_exporter_api_texts_truncated_total", "clouddb_exporter_api_retry_after_capped_total",
		"clouddb_exporter_poll_cycle_duration_seconds",
		"clouddb_exporter_poll_children_refresh_period_seconds", "clouddb_exporter_poll_cycle_overruns_total":
		return true
	}
	return false
}

// Gather gathers the API metrics alone, wherever else they are registered.
func (m *Metrics) Gather() ([]*dto.MetricFamily, error) { return m.own.Gather() }

// Generation counts changes of the metrics; read it before gathering.
func (m *Metrics) Generation() uint64 { return m.generation.Load() }

// Removals counts RemoveProject calls.
func (m *Metrics) Removals() uint64 { return m.removals.Load() }

// Observer returns one project's client Observer; retry and wait series start at 0.
func (m *Metrics) Observer(projectID string) apiclient.Observer {
	return m.observer(projectID, apiclient.Operations, []string{apiclient.OpListServices, apiclient.OpGetService,
		apiclient.OpListReplicaSets, apiclient.OpListVPCs, apiclient.OpGetVPC, apiclient.OpListPeerings, apiclient.OpGetPeering})
}

// DiscoveryObserver returns the discovery client's Observer (empty project_id).
func (m *Metrics) DiscoveryObserver() apiclient.Observer {
	return m.observer("", []string{apiclient.OpListProjects}, nil)
}

func (m *Metrics) observer(projectID string, retryOps, decodeOps []string) apiclient.Observer {
	defer m.generation.Add(1)
	project := prometheus.Labels{"project_id": projectID}
	o := &apiObserver{
		generation: &m.generation,
		requests:   m.requests.MustCurryWith(project),
		duration:   m.duration.MustCurryWith(project),
		retries:    m.retries.MustCurryWith(project),
		decode:     m.decodeErrors.MustCurryWith(project),
		tooLong:    m.listsTooLong.MustCurryWith(project),
		cut:        m.textsCut.MustCurryWith(project),
		wait:       m.rateLimitWait.WithLabelValues(projectID),
		calls:      make(map[string]*atomic.Pointer[callSeries], len(apiclient.Operations)),
	}
	for _, op := range apiclient.Operations {
		o.calls[op] = new(atomic.Pointer[callSeries])
	}
	for _, op := range retryOps {
		o.retries.WithLabelValues(op)
	}
	for _, op := range decodeOps {
		o.decode.WithLabelValues(op)
	}
	return o
}

// PollObserver is what one project's poller reports about its cycles.
type PollObserver struct {
	generation    *atomic.Uint64
	cycleDuration prometheus.Gauge
	refreshPeriod prometheus.Gauge
	overruns      prometheus.Counter
	m             *Metrics
	id            string
}

// PollObserver returns one project's cycle observer; overruns start at 0.
func (m *Metrics) PollObserver(projectID string) *PollObserver {
	defer m.generation.Add(1)
	return &PollObserver{generation: &m.generation, overruns: m.overruns.WithLabelValues(projectID), m: m, id: projectID}
}

// ObserveCycle records a finished full cycle. One poller calls it at a time.
func (o *PollObserver) ObserveCycle(duration, refreshPeriod time.Duration, overrun bool) {
	if o.cycleDuration == nil {
		o.cycleDuration = o.m.cycleDuration.WithLabelValues(o.id)
		o.refreshPeriod = o.m.refreshPeriod.WithLabelValues(o.id)
	}
	o.cycleDuration.Set(duration.Seconds())
	o.refreshPeriod.Set(refreshPeriod.Seconds())
	if overrun {
		o.overruns.Inc()
	}
	o.generation.Add(1)
}

// ObserveRetryAfterCapped records a Retry-After longer than the poller defers.
func (o *PollObserver) ObserveRetryAfterCapped(operation string) {
	o.m.retryAfterCapped.WithLabelValues(o.id, operation).Inc()
	o.generation.Add(1)
}

// RemoveProject deletes a project's series; call it once its client stopped.
func (m *Metrics) RemoveProject(projectID string) {
	defer m.removals.Add(1)
	defer m.generation.Add(1)
	project := prometheus.Labels{"project_id": projectID}
	m.requests.DeletePartialMatch(project)
	m.duration.DeletePartialMatch(project)
	m.retries.DeletePartialMatch(project)
	m.rateLimitWait.DeletePartialMatch(project)
	m.decodeErrors.DeletePartialMatch(project)
	m.listsTooLong.DeletePartialMatch(project)
	m.textsCut.DeletePartialMatch(project)
	m.retryAfterCapped.DeletePartialMatch(project)
	m.cycleDuration.DeletePartialMatch(project)
	m.refreshPeriod.DeletePartialMatch(project)
	m.overruns.DeletePartialMatch(project)
}

type apiObserver struct {
	generation *atomic.Uint64 // of the Metrics, bumped after each change
	requests   *prometheus.CounterVec
	duration   prometheus.ObserverVec
	retries    *prometheus.CounterVec
	decode     *prometheus.CounterVec
	tooLong    *prometheus.CounterVec
	cut        *prometheus.CounterVec
	wait       prometheus.Counter
	// calls holds each operation's request series, made at its first call (a series appears
	// only once counted); read-only once made, so that a call takes no lock to find its slot.
	calls map[string]*atomic.Pointer[callSeries]
}

// callSeries are one operation's request series, for the code it last answered: a lookup by
// labels hashes them and locks the vector, on each of the data plane's many calls.
type callSeries struct {
	code     string
	requests prometheus.Counter
	duration prometheus.Observer
}

func (o *apiObserver) ObserveRequest(operation, code string, duration time.Duration) {
	s := o.series(operation, code)
	s.requests.Inc()
	s.duration.Observe(duration.Seconds())
	o.generation.Add(1)
}

func (o *apiObserver) series(operation, code string) *callSeries {
	slot := o.calls[operation]
	if slot == nil {
		return &callSeries{requests: o.requests.WithLabelValues(operation, code), duration: o.duration.WithLabelValues(operation)}
	}
	s := slot.Load()
	if s != nil && s.code == code {
		return s
	}
	next := &callSeries{code: code, requests: o.requests.WithLabelValues(operation, code)}
	if s != nil {
		next.duration = s.duration
	} else {
		next.duration = o.duration.WithLabelValues(operation)
	}
	slot.Store(next)
	return next
}

func (o *apiObserver) ObserveRetry(operation string) {
	o.retries.WithLabelValues(operation).Inc()
	o.generation.Add(1)
}

func (o *apiObserver) ObserveRateLimitWait(_ string, wait time.Duration) {
	o.wait.Add(wait.Seconds())
	o.generation.Add(1)
}

func (o *apiObserver) ObserveDecodeError(operation string) {
	o.decode.WithLabelValues(operation).Inc()
	o.generation.Add(1)
}

func (o *apiObserver) ObserveListTooLong(operation string) {
	o.tooLong.WithLabelValues(operation).Inc()
	o.generation.Add(1)
}

func (o *apiObserver) ObserveTextTruncated(operation string) {
	o.cut.WithLabelValues(operation).Inc()
	o.generation.Add(1)
}
