package dataplane

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/pricing"
	"github.com/clouddb/clouddb_exporter/rightsizing"
)

type discardPublisher struct{}

func (discardPublisher) SetSnapshot(*fleet.Snapshot) {}
func (discardPublisher) RemoveProject(string)        {}

// BenchmarkUsageReadRightsizing is a whole usage read of N services (every
// series, seven buckets each, through the decoded answers the client
// returns), without and with rightsizing: the observer adding every
// bucket of the primary's CPU and memory to the windows, and one publish
// sizing every service. The goal: rightsizing adds at most 10% (compare the
// two sub-benchmarks' ns/op, or read rightsizing_share: the time spent in
// the observer and the publish over the whole read's, on a machine too
// busy for the first comparison to be steady).
func BenchmarkUsageReadRightsizing(b *testing.B) {
	var names []string
	for _, suf := range apiclient.UsageSeriesSuffixes {
		names = append(names, "clouddb"+suf)
	}
	sizes, err := rightsizing.ParseSizes(rightsizing.DefaultSizes)
	if err != nil {
		b.Fatal(err)
	}
	cfg := rightsizing.Config{Window: rightsizing.DefaultWindow, Headroom: 0.15, MinCoverage: 0.8, Sizes: sizes}
	for _, n := range []int{10000} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("N=%d/rightsizing=%v", n, on), func(b *testing.B) {
				host := newFakeHost(n)
				host.setServices(func(list []fleet.Service) []fleet.Service {
					one := apiclient.Int(1000)
					four := apiclient.Int(4)
					for i := range list {
						list[i].Resources = []apiclient.Resource{{ID: "r", Spec: &apiclient.ResourceSpec{CPUMillis: &one, MemoryGBs: &four}}}
					}
					return list
				})
				clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC))
				tracker := rightsizing.NewTracker(cfg, clock.Now)
				pub := rightsizing.NewPublisher(discardPublisher{}, tracker, func() *pricing.Table { return nil })
				usage := usageSettings{Enabled: true, Interval: 5 * time.Minute, MaxJobs: defaultUsageMaxJobs}
				opts := Options{Collect: withReader(config.Collect{Interval: 20 * time.Second, Concurrency: 8}, usageKey, usage), Now: clock.Now}
				var spent atomic.Int64
				if on {
					opts.UsageObserver = &UsageObserver{Suffixes: []string{apiclient.SeriesCPUUsage, apiclient.SeriesMemoryUsage}, Backfill: 5 * time.Minute,
						Observe: func(id, suffix string, series []apiclient.Series) {
							start := time.Now()
							tracker.AddSeries("p1", id, suffix, series)
							spent.Add(int64(time.Since(start)))
						}}
				}
				b.ReportAllocs()
				start := time.Now()
				for b.Loop() {
					u := newUsageReader(newRunner(host, opts, PartUsage, usage.Interval), benchUsage{names})
					u.unpaced = true
					u.tick(context.Background())
					if on {
						snap := host.Snapshot()
						t0 := time.Now()
						pub.SetSnapshot(snap)
						spent.Add(int64(time.Since(t0)))
					}
					clock.Advance(5 * time.Minute)
				}
				b.ReportMetric(float64(spent.Load())/float64(time.Since(start)), "rightsizing_share")
				if on && tracker.Len() != n {
					b.Fatalf("%d windows, want %d", tracker.Len(), n)
				}
			})
		}
	}
}
