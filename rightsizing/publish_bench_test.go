package rightsizing

import (
	"fmt"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/fleettest"

	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// BenchmarkPublish sizes the services of a snapshot of N, each with a
// window of 14 days: every service (all: each publish has a new list of
// the services, as after a poll in which one changed), and as in the field
// (field: a publish every 2.2 s, as the usage's, the logs' and the poller's
// come at 10k services, with a usage read's new bucket in 74 services'
// windows before each, every service's once in 5 minutes). ns/publish is
// the publish alone, without the adding of the buckets.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			clock := fakeclock.New(start)
			tr := NewTracker(Config{Window: DefaultWindow, Headroom: DefaultHeadroom, MinCoverage: DefaultMinCoverage, Sizes: []pricing.Size{{CPUMillis: 1000, MemoryGBs: 4}}}, clock.Now)
			var times []time.Time
			for day := range 14 {
				times = append(times, start.Add(time.Duration(day)*24*time.Hour))
			}
			cpu, mem := make([]float64, len(times)), make([]float64, len(times))
			lists := [2]*fleet.Snapshot{{ProjectID: "p1"}, {ProjectID: "p1"}}
			for i := range n {
				for j := range times {
					cpu[j], mem[j] = float64(100+(i*37+j*131)%900), float64(1<<30)
				}
				id := fmt.Sprintf("service-%06d", i)
				tr.Add(testKey("p1", id), times, cpu, mem)
				for _, s := range lists {
					s.Services = append(s.Services, sizedService(id, 1000, 4, 0))
				}
			}
			clock.Advance(14 * 24 * time.Hour)
			b.Run("all", func(b *testing.B) {
				p := NewPublisher(&fleettest.Recorder{}, tr, func() *pricing.Table { return nil })
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					if r := p.recommend(lists[i%2]); len(r.Services) != n {
						b.Fatalf("%d recommendations, want %d", len(r.Services), n)
					}
				}
			})
			b.Run("field", func(b *testing.B) { benchFieldPublish(b, tr, clock, lists[0]) })
		})
	}
}

func benchFieldPublish(b *testing.B, tr *Tracker, clock *fakeclock.Clock, s *fleet.Snapshot) {
	const perPublish, every = 74, 2200 * time.Millisecond
	p := NewPublisher(&fleettest.Recorder{}, tr, func() *pricing.Table { return nil })
	p.recommend(s)
	b.ReportAllocs()
	var spent time.Duration
	next := 0
	for b.Loop() {
		clock.Advance(every)
		bucket := []time.Time{clock.Now().Truncate(time.Minute).Add(-time.Minute)}
		for range perPublish {
			tr.Add(testKey("p1", s.Services[next].ServiceID), bucket, []float64{float64(100 + next%900)}, []float64{1 << 30})
			next = (next + 1) % len(s.Services)
		}
		t0 := time.Now()
		if r := p.recommend(s); len(r.Services) != len(s.Services) {
			b.Fatalf("%d recommendations, want %d", len(r.Services), len(s.Services))
		}
		spent += time.Since(t0)
	}
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ns/publish")
}

// BenchmarkForgetDeleted checks a complete list of N services against their
// windows, as the first publish of each services read does.
func BenchmarkForgetDeleted(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			clock := fakeclock.New(start)
			tr := NewTracker(Config{Window: DefaultWindow}, clock.Now)
			s := &fleet.Snapshot{ProjectID: "p1", Parts: []fleet.PartHealth{{Name: fleet.PartServices, Success: true}}}
			for i := range n {
				id := fmt.Sprintf("service-%06d", i)
				tr.Add(testKey("p1", id), []time.Time{start}, []float64{100}, []float64{1 << 30})
				s.Services = append(s.Services, sizedService(id, 1000, 4, 0))
			}
			p := NewPublisher(&fleettest.Recorder{}, tr, func() *pricing.Table { return nil })
			b.ReportAllocs()
			for b.Loop() {
				s.Parts[0].LastSuccess = s.Parts[0].LastSuccess.Add(time.Second)
				p.forgetDeleted(s)
			}
			if tr.Len() != n {
				b.Fatalf("%d windows left of %d", tr.Len(), n)
			}
		})
	}
}
