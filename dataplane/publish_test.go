package dataplane

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
)

// TestUsagePublishAllocatesNothingPerService: a publish, every 5 s while a
// read goes on, makes the usage and its list of series, nothing for each
// service or series (it sorted every series key and made maps for each
// service's jobs: 35 MB a publish at 10,000 services).
func TestUsagePublishAllocatesNothingPerService(t *testing.T) {
	const services = 50
	h := newUsageHarness(t, services, 0, usageSettings{Series: []string{"database_qps", "database_job_success"}},
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
	opts := Options{Collect: withReader(config.Collect{Interval: time.Minute}, logsKey, logsSettings{Enabled: true, Interval: time.Minute})}
	l := newLogsReader(newRunner(host, opts, PartLogs, time.Minute), nil)
	for i := range services {
		id := fmt.Sprintf("svc%02d", i)
		l.cursors[id] = newLogCursor(id, time.Time{})
	}
	if got := len(l.build().Counts); got != services {
		t.Fatalf("%d services' counts published, want %d", got, services)
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
	h := newUsageHarness(t, services, 0, usageSettings{Series: []string{"database_qps", "database_job_success"}},
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

// TestLogsPublishBytesPerCount: a publish shares each service's counts
// with its cursor until they change, 8 bytes a service, about 1 a count,
// rather than a list of counts, 24 bytes each (70,000 counts at 10,000
// services, every 5 s of a read, two lists alive while the last is
// rendered), and the cursor keeps them in one block of 128 bytes.
func TestLogsPublishBytesPerCount(t *testing.T) {
	const services = 1000
	host := newFakeHost(services)
	opts := Options{Collect: withReader(config.Collect{Interval: time.Minute}, logsKey, logsSettings{Enabled: true, Interval: time.Minute})}
	l := newLogsReader(newRunner(host, opts, PartLogs, time.Minute), nil)
	for i := range services {
		id := fmt.Sprintf("svc%03d", i)
		l.cursors[id] = newLogCursor(id, time.Time{})
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	first := l.build()
	runtime.ReadMemStats(&ms1)
	// 200 bytes before: seven counts, the service's id kept for them and
	// the ids sorted.
	if perService := float64(ms1.TotalAlloc-ms0.TotalAlloc) / services; perService > 12 {
		t.Errorf("the first publish made %.1f bytes a service, want at most 12", perService)
	}
	runtime.KeepAlive(first)
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.build()
		}
	})
	if perService := float64(res.AllocedBytesPerOp()) / services; perService > 9 {
		t.Errorf("a publish made %.1f bytes a service, want at most 9", perService)
	}
	for i, c := range first.Counts {
		if c != l.cursors[c.ServiceID()].counts {
			t.Fatalf("count %d, %v, is a copy of its cursor's", i, c)
		}
	}
}
