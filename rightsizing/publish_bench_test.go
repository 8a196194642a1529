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

// BenchmarkPublish sizes every service of a snapshot of N, each with a full
// window, as every publish does (the poller's and the usage reads').
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
			s := &fleet.Snapshot{ProjectID: "p1"}
			for i := range n {
				for j := range times {
					cpu[j], mem[j] = float64(100+(i*37+j*131)%900), float64(1<<30)
				}
				id := fmt.Sprintf("service-%06d", i)
				tr.Add(testKey("p1", id), times, cpu, mem)
				s.Services = append(s.Services, sizedService(id, 1000, 4, 0))
			}
			clock.Advance(14 * 24 * time.Hour)
			p := NewPublisher(&fleettest.Recorder{}, tr, func() *pricing.Table { return nil })
			b.ReportAllocs()
			for b.Loop() {
				if r := p.recommend(s); len(r.Services) != n {
					b.Fatalf("%d recommendations, want %d", len(r.Services), n)
				}
			}
		})
	}
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
