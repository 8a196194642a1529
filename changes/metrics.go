package changes

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons an event is dropped somewhere.
const (
	reasonRing      = "ring_full"
	reasonFile      = "file_error"
	reasonFileQueue = "file_queue_full"
	reasonSinkQueue = "sink_queue_full"
	reasonSink      = "sink_error"
)

var dropReasons = []string{reasonRing, reasonFile, reasonFileQueue, reasonSinkQueue, reasonSink}

var (
	changesDesc = prometheus.NewDesc("clouddb_changes_total",
		"Changes the exporter derived from successive reads of the API.",
		[]string{"project_id", "object_type", "kind"}, nil)
	lastChangeDesc = prometheus.NewDesc("clouddb_service_last_change_timestamp_seconds",
		"Time the exporter last saw a change of a database service, in Unix seconds.",
		[]string{"project_id", "service_id"}, nil)
	droppedDesc = prometheus.NewDesc("clouddb_exporter_changes_dropped_total",
		"Change events lost, by reason.",
		[]string{"reason"}, nil)
)

// Family is a change metric's descriptor and type.
type Family struct {
	Desc *prometheus.Desc
	Type string
}

// Families lists the change metrics, for the metrics reference.
func Families() []Family {
	return []Family{{changesDesc, "counter"}, {lastChangeDesc, "gauge"}, {droppedDesc, "counter"}}
}

// metrics is the timeline's counters, read by its Collect.
type metrics struct {
	mu     sync.Mutex
	counts map[string]map[[2]string]float64
	last   map[string]map[string]float64
	drops  map[string]float64
}

func newMetrics() *metrics {
	m := &metrics{counts: map[string]map[[2]string]float64{}, last: map[string]map[string]float64{}, drops: map[string]float64{}}
	for _, r := range dropReasons {
		m.drops[r] = 0
	}
	return m
}

// addProject serves every kind of the project at 0.
func (m *metrics) addProject(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addProjectLocked(id)
}

func (m *metrics) addProjectLocked(id string) {
	if m.counts[id] != nil {
		return
	}
	c := map[[2]string]float64{}
	for _, t := range KindsOf {
		for _, k := range t.Kinds {
			c[[2]string{t.Type, k}] = 0
		}
	}
	m.counts[id] = c
}

func (m *metrics) count(e *Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.ObjectType == TypeProject && e.Kind == KindRemoved {
		// The project's series went with it (removeProject): a removed
		// project is on the feed, never a series of its own again.
		return
	}
	m.addProjectLocked(e.ProjectID)
	m.counts[e.ProjectID][[2]string{e.ObjectType, e.Kind}]++
	if e.ObjectType != TypeService {
		return
	}
	if e.Kind == KindDeleted {
		delete(m.last[e.ProjectID], e.ObjectID)
		return
	}
	if m.last[e.ProjectID] == nil {
		m.last[e.ProjectID] = map[string]float64{}
	}
	m.last[e.ProjectID][e.ObjectID] = float64(e.Time.UnixNano()) / 1e9
}

// removeProject drops a stopped project's series, as every family does.
func (m *metrics) removeProject(project string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.counts, project)
	delete(m.last, project)
}

func (m *metrics) dropped(reason string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.drops[reason] += float64(n)
}

// Describe implements prometheus.Collector.
func (t *Timeline) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range Families() {
		ch <- f.Desc
	}
}

// Collect implements prometheus.Collector.
func (t *Timeline) Collect(ch chan<- prometheus.Metric) {
	m := t.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range slicesSorted(m.counts) {
		for _, ty := range KindsOf {
			for _, k := range ty.Kinds {
				ch <- prometheus.MustNewConstMetric(changesDesc, prometheus.CounterValue, m.counts[p][[2]string{ty.Type, k}], p, ty.Type, k)
			}
		}
	}
	for _, p := range slicesSorted(m.last) {
		for _, id := range slicesSorted(m.last[p]) {
			ch <- prometheus.MustNewConstMetric(lastChangeDesc, prometheus.GaugeValue, m.last[p][id], p, id)
		}
	}
	for _, r := range dropReasons {
		ch <- prometheus.MustNewConstMetric(droppedDesc, prometheus.CounterValue, m.drops[r], r)
	}
}
