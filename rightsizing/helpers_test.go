package rightsizing

import (
	"math"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// splitKey reads "project/service", or "service" of project "p".
func splitKey(key string) (projectID, serviceID string) {
	if p, s, ok := strings.Cut(key, "/"); ok {
		return p, s
	}
	return "p", key
}

// testKey is a service's key for Add, feed and windowOf.
func testKey(projectID, serviceID string) string { return projectID + "/" + serviceID }

// windowOf is key's window, nil for none.
func (t *Tracker) windowOf(key string) *Window {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.window(splitKey(key))
}

// Add records the primary's buckets of key ("project/service", or a
// service of project "p") through AddSeries, as a usage read does: cpu
// (millicores) and memory (bytes) at the same index of times, NaN for an
// empty bucket; a nil one is a series not read.
func (t *Tracker) Add(key string, times []time.Time, cpuMillis, memBytes []float64) {
	projectID, serviceID := splitKey(key)
	series := func(values []float64) []apiclient.Series {
		s := apiclient.Series{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: make([]apiclient.SeriesPoint, len(times))}
		for i, at := range times {
			s.Data[i].Time = apiclient.Time{Time: at}
			if !math.IsNaN(values[i]) {
				s.Data[i].Value = apiclient.NullableFloat{Value: values[i], Valid: true}
			}
		}
		return []apiclient.Series{s}
	}
	if cpuMillis != nil {
		t.AddSeries(projectID, serviceID, apiclient.SeriesCPUUsage, series(cpuMillis))
	}
	if memBytes != nil {
		t.AddSeries(projectID, serviceID, apiclient.SeriesMemoryUsage, series(memBytes))
	}
}

// recommend is Recommend, insufficient data for a key never added.
func (t *Tracker) recommend(key string, current pricing.Size) Recommendation {
	projectID, serviceID := splitKey(key)
	if r, ok := t.Recommend(projectID, serviceID, current); ok {
		return r
	}
	return Recommendation{Finding: InsufficientData}
}
