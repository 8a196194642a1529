package rightsizing

import (
	"math"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// Add records the primary's buckets through AddSeries, as a usage read
// does: cpu (millicores) and memory (bytes) at the same index of times,
// NaN for an empty bucket; a nil one is a series not read.
func (t *Tracker) Add(key string, times []time.Time, cpuMillis, memBytes []float64) {
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
		t.AddSeries(key, apiclient.SeriesCPUUsage, series(cpuMillis))
	}
	if memBytes != nil {
		t.AddSeries(key, apiclient.SeriesMemoryUsage, series(memBytes))
	}
}

// recommend is Recommend, insufficient data for a key never added.
func (t *Tracker) recommend(key string, current pricing.Size) Recommendation {
	if r, ok := t.Recommend(key, current); ok {
		return r
	}
	return Recommendation{Finding: InsufficientData}
}
