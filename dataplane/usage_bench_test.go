package dataplane

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// benchUsage answers as the API client does after decoding: every answer
// is new, its strings its own. Each service has two nodes and two jobs,
// and a window of seven buckets, the newest null, as the simulator sends.
type benchUsage struct{ names []string }

func (b benchUsage) GetServiceMetricsAvailableSeries(context.Context, string) ([]string, error) {
	out := make([]string, len(b.names))
	for i, n := range b.names {
		out[i] = strings.Clone(n)
	}
	return out, nil
}

func (b benchUsage) GetServiceMetricsSeries(_ context.Context, _ string, req apiclient.SeriesRequest) ([]apiclient.Series, error) {
	var sets []apiclient.SeriesLabels
	if strings.Contains(req.Name, "_job_") {
		for _, j := range []string{"1000", "1001"} {
			sets = append(sets, apiclient.SeriesLabels{"role": strings.Clone("primary"), "ordinal": strings.Clone("0"), "job_id": strings.Clone(j)})
		}
	} else {
		sets = append(sets, apiclient.SeriesLabels{"role": strings.Clone("primary"), "ordinal": strings.Clone("0")},
			apiclient.SeriesLabels{"role": strings.Clone("replica"), "ordinal": strings.Clone("1")})
	}
	out := make([]apiclient.Series, len(sets))
	for i, labels := range sets {
		out[i].Labels = labels
		for t := req.From.Time; t.Before(req.To.Time); t = t.Add(time.Minute) {
			p := apiclient.SeriesPoint{Time: apiclient.Time{Time: t}}
			if t.Add(2 * time.Minute).Before(req.To.Time) {
				p.Value = apiclient.NullableFloat{Value: float64(t.Unix() % 977), Valid: true}
			}
			out[i].Data = append(out[i].Data, p)
		}
	}
	return out, nil
}

// readUsageOnce reads every series of n services once, as the first usage
// read does, and returns the reader and the live heap it and its publish keep.
func readUsageOnce(n, concurrency int, names []string) (*usageReader, uint64) {
	host := newFakeHost(n)
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC))
	usage := usageSettings{Enabled: true, Interval: 5 * time.Minute, MaxJobs: defaultUsageMaxJobs}
	opts := Options{Collect: withReader(config.Collect{Interval: 20 * time.Second, Concurrency: concurrency}, usageKey, usage), Now: clock.Now}
	before := liveHeap()
	u := newUsageReader(newRunner(host, opts, PartUsage, usage.Interval), benchUsage{names})
	u.unpaced = true
	u.tick(context.Background())
	host.published = nil
	return u, liveHeap() - before
}

// liveHeap collects twice: the first only moves the sync.Pools' contents
// aside, and a measure began after it would find them freed, a few
// bytes less per item.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkUsageMemory reads every series of N services once, as the
// first usage read does, and reports what the reader and the snapshot it
// published keep per service (kept_bytes/service, after a collection),
// then what one publish while a read goes on costs (publish_ms,
// publish_bytes: every 5 s of a read).
func BenchmarkUsageMemory(b *testing.B) {
	var names []string
	for _, suf := range apiclient.UsageSeriesSuffixes {
		names = append(names, "clouddb"+suf)
	}
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var kept, publishNS, publishBytes float64
			for range b.N {
				u, heap := readUsageOnce(n, 8, names)
				kept += float64(heap) / float64(n)
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				start := time.Now()
				const publishes = 5
				for range publishes {
					u.publishData(u.fill(false))
				}
				publishNS += float64(time.Since(start).Nanoseconds()) / publishes
				runtime.ReadMemStats(&ms1)
				publishBytes += float64(ms1.TotalAlloc-ms0.TotalAlloc) / publishes
				runtime.KeepAlive(u)
			}
			b.ReportMetric(kept/float64(b.N), "kept_bytes/service")
			b.ReportMetric(publishNS/float64(b.N)/1e6, "publish_ms")
			b.ReportMetric(publishBytes/float64(b.N), "publish_bytes")
		})
	}
}

// BenchmarkLogsPublish makes the log counts of N services, each with the
// usual seven severities, as every publish of a log read does.
func BenchmarkLogsPublish(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			host := newFakeHost(n)
			opts := Options{Collect: withReader(config.Collect{Interval: 20 * time.Second}, logsKey, logsSettings{Enabled: true, Interval: time.Minute})}
			l := newLogsReader(newRunner(host, opts, PartLogs, time.Minute), nil)
			for _, svc := range host.services {
				l.cursors[svc.ServiceID] = newLogCursor(svc.ServiceID, time.Time{})
			}
			l.build() // a reader has published before
			b.ReportAllocs()
			for b.Loop() {
				if logs := l.build(); len(logs.Counts) != n {
					b.Fatalf("%d services' counts, want %d", len(logs.Counts), n)
				}
			}
		})
	}
}

// midRead records the live heap at its at-th series call.
type midRead struct {
	benchUsage
	calls, at int
	heap      uint64
}

func (m *midRead) GetServiceMetricsSeries(ctx context.Context, id string, req apiclient.SeriesRequest) ([]apiclient.Series, error) {
	if m.calls++; m.calls == m.at {
		m.heap = liveHeap()
	}
	return m.benchUsage.GetServiceMetricsSeries(ctx, id, req)
}

// BenchmarkUsageMemoryDuringRead reports what a usage read of N services,
// not their first, holds while it goes on (read_bytes/service, halfway,
// over what the reader kept before it): its plan, one task a series.
func BenchmarkUsageMemoryDuringRead(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var held float64
			for range b.N {
				held += heldDuringRead(b, n)
			}
			b.ReportMetric(held/float64(b.N), "read_bytes/service")
		})
	}
}

// heldDuringRead reads every series of n services twice, and returns what
// the second read holds a service halfway over what the reader kept before.
func heldDuringRead(tb testing.TB, n int) float64 {
	var names []string
	for _, suf := range apiclient.UsageSeriesSuffixes {
		names = append(names, "clouddb"+suf)
	}
	u, _ := readUsageOnce(n, 1, names)
	m := &midRead{benchUsage: benchUsage{names}, at: n * len(names) / 2}
	u.client = m
	before := liveHeap()
	u.tick(context.Background())
	if m.heap == 0 {
		tb.Fatalf("%d series calls, want %d", m.calls, n*len(names))
	}
	runtime.KeepAlive(u)
	return (float64(m.heap) - float64(before)) / float64(n)
}
