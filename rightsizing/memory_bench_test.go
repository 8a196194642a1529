package rightsizing

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// BenchmarkTrackerMemory fills the windows of N services over the whole
// window (half an hour a day of varied values, so that every slot holds a
// spread histogram) and reports the live heap they keep per service (kept_bytes/service) and the
// state file's bytes per service (saved_bytes/service), for the sizing
// table of docs/operations.md.
func BenchmarkTrackerMemory(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var kept, saved float64
			for range b.N {
				clock := fakeclock.New(start)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				tr := NewTracker(Config{Window: DefaultWindow}, clock.Now)
				var times []time.Time
				for day := range 14 {
					for m := range 30 {
						times = append(times, start.Add(time.Duration(day)*24*time.Hour+time.Duration(m)*time.Minute))
					}
				}
				cpu, mem := make([]float64, len(times)), make([]float64, len(times))
				for i := range n {
					for j := range times {
						cpu[j] = float64(50 + (i*37+j*131)%4000)
						mem[j] = float64(1<<30 + (i*7+j*13)%1000<<20)
					}
					tr.Add(fmt.Sprintf("project-%d/service-%06d", i%3, i), times, cpu, mem)
				}
				clock.Advance(14 * 24 * time.Hour)
				runtime.GC()
				runtime.ReadMemStats(&after)
				kept += float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				st, _ := tr.MarshalBinary()
				saved += float64(len(st)) / float64(n)
				runtime.KeepAlive(tr)
			}
			b.ReportMetric(kept/float64(b.N), "kept_bytes/service")
			b.ReportMetric(saved/float64(b.N), "saved_bytes/service")
		})
	}
}
