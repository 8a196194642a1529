package dataplane

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// TestUsagePublishAllocatesNothingPerService: a publish, every 5 s while a
// read goes on, makes the usage and its list of series, nothing for each
// service or series (it sorted every series key and made maps for each
// service's jobs: 35 MB a publish at 10,000 services).
func TestUsagePublishAllocatesNothingPerService(t *testing.T) {
	const services = 50
	h := newUsageHarness(t, services, 0, config.Usage{Series: []string{"database_qps", "database_job_success"}},
		"x_database_qps", "x_database_job_success")
	now := h.clock.Now().Truncate(time.Minute).Add(-time.Minute)
	h.fu.series["x_database_qps"] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{point(now, f64(1))}}}
	h.fu.series["x_database_job_success"] = []apiclient.Series{
		{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0", "job_id": "1"}, Data: []apiclient.SeriesPoint{point(now, f64(1))}},
		{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0", "job_id": "2"}, Data: []apiclient.SeriesPoint{point(now, f64(0))}},
	}
	if got := len(h.tick().Services); got != services {
		t.Fatalf("%d services published, want %d", got, services)
	}
	// A few allocations a publish (more under the race detector), never
	// one per service.
	if allocs := testing.AllocsPerRun(10, func() { h.u.build(false) }); allocs > services/5 {
		t.Errorf("a publish of %d services made %.0f allocations, want at most %d", services, allocs, services/5)
	}
}

// TestLogsPublishAllocatesNothingPerService: the same for the log counts
// (each service's severities were sorted into a slice of their own).
func TestLogsPublishAllocatesNothingPerService(t *testing.T) {
	const services = 50
	host := newFakeHost(services)
	opts := Options{Collect: config.Collect{Interval: time.Minute, Logs: config.Logs{Enabled: true, Interval: time.Minute}}}
	l := newLogsReader(newRunner(host, opts, fleet.PartLogs, time.Minute), nil)
	for i := range services {
		l.cursors[fmt.Sprintf("svc%02d", i)] = newLogCursor(time.Time{}, time.Minute)
	}
	if got := len(l.build().Counts); got != 7*services {
		t.Fatalf("%d counts published, want %d", got, 7*services)
	}
	if allocs := testing.AllocsPerRun(10, func() { l.build() }); allocs > services/5 {
		t.Errorf("a publish of %d services' log counts made %.0f allocations, want at most %d", services, allocs, services/5)
	}
}

// TestUsagePublishBytesPerSeries: a publish's list holds a pointer to each
// service the reader keeps, a byte or two a series, not a pointer to each
// series, 8 bytes (nor a list header, 24: 3.9 MB a publish at 10,000
// services, every 5 s of a read, two of them live while the last is
// rendered).
func TestUsagePublishBytesPerSeries(t *testing.T) {
	const services = 200
	h := newUsageHarness(t, services, 0, config.Usage{Series: []string{"database_qps", "database_job_success"}},
		"x_database_qps", "x_database_job_success")
	now := h.clock.Now().Truncate(time.Minute).Add(-time.Minute)
	h.fu.series["x_database_qps"] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{point(now, f64(1))}}}
	h.fu.series["x_database_job_success"] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0", "job_id": "1"}, Data: []apiclient.SeriesPoint{point(now, f64(1))}}}
	if got := len(h.tick().Samples()); got != 2*services {
		t.Fatalf("%d samples published, want %d", got, 2*services)
	}
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.u.build(false)
		}
	})
	if perSeries := float64(res.AllocedBytesPerOp()) / (2 * services); perSeries > 6 {
		t.Errorf("a publish made %.1f bytes per series, want at most 6", perSeries)
	}
}

// TestLogsPublishBytesPerCount: a publish's counts hold their service id
// and severity interned, 24 bytes a count rather than two string headers
// and the count, 40 (70,000 counts at 10,000 services, two lists alive
// while the last is rendered).
func TestLogsPublishBytesPerCount(t *testing.T) {
	const services = 1000
	host := newFakeHost(services)
	opts := Options{Collect: config.Collect{Interval: time.Minute, Logs: config.Logs{Enabled: true, Interval: time.Minute}}}
	l := newLogsReader(newRunner(host, opts, fleet.PartLogs, time.Minute), nil)
	for i := range services {
		l.cursors[fmt.Sprintf("svc%03d", i)] = newLogCursor(time.Time{}, time.Minute)
	}
	before := liveHeap()
	first := l.build()
	kept := liveHeap() - before
	counts := len(first.Counts)
	// The first publish also keeps each service's id for its counts once:
	// a string header, not an interned entry of some 300 bytes.
	if perService := (float64(kept) - 25*float64(counts)) / services; perService > 100 {
		t.Errorf("the first publish keeps %.0f bytes a service besides its counts, want at most 100", perService)
	}
	runtime.KeepAlive(first)
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.build()
		}
	})
	// The ids sorted for the walk are 16 bytes a service; the list is
	// rounded up to whole pages.
	if perCount := float64(res.AllocedBytesPerOp()-16*services) / float64(counts); perCount > 28 {
		t.Errorf("a publish made %.1f bytes per count, want at most 28", perCount)
	}
}
