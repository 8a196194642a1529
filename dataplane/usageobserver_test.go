package dataplane

import (
	"slices"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestUsageReadsEveryBucketSinceTheLast: a read reaches back to the series'
// last read (at most an hour), not only an interval, so that a refresh
// slower than the interval skips no bucket; an observed series' first read
// reaches the observer's backfill back, and the observer gets every bucket.
func TestUsageReadsEveryBucketSinceTheLast(t *testing.T) {
	const cpu, qps = "acme_system_cpu_usage_millicores", "acme_database_qps"
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"system_cpu_usage_millicores", "database_qps"}}, cpu, qps)
	var observed []int
	h.u.opts.UsageObserver = &UsageObserver{
		Suffixes: []string{apiclient.SeriesCPUUsage},
		Backfill: 30 * time.Minute,
		Observe: func(serviceID, suffix string, series []apiclient.Series) {
			if serviceID != "svc00" || suffix != apiclient.SeriesCPUUsage {
				t.Errorf("observed %s %s", serviceID, suffix)
			}
			observed = append(observed, len(series[0].Data))
		},
	}
	start := h.clock.Now()
	h.fu.series[cpu] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{
		point(start.Add(-3*time.Minute).Truncate(time.Minute), f64(100)), point(start.Add(-2*time.Minute).Truncate(time.Minute), f64(200)),
	}}}
	minute := func(t time.Time) time.Time { return t.Truncate(time.Minute) }

	h.tick()
	h.clock.Advance(40 * time.Minute) // a refresh far slower than the 5m interval
	h.tick()
	h.clock.Advance(3 * time.Hour)
	h.tick()
	want := map[string][]time.Time{
		cpu: {minute(start.Add(-30 * time.Minute)), minute(start.Add(-2 * time.Minute)), minute(h.clock.Now().Add(-time.Hour))},
		qps: {minute(start.Add(-7 * time.Minute)), minute(start.Add(-2 * time.Minute)), minute(h.clock.Now().Add(-time.Hour))},
	}
	for name, w := range want {
		if got := h.fu.froms[name]; !slices.EqualFunc(got, w, time.Time.Equal) {
			t.Errorf("%s read from %v; want %v", name, got, w)
		}
	}
	if !slices.Equal(observed, []int{2, 2, 2}) {
		t.Errorf("observer got %v buckets per read; want every bucket of each of the 3 reads", observed)
	}
}
