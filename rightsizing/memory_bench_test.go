package rightsizing

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// BenchmarkTrackerMemory fills the windows of N services for a day and
// reports the live heap they keep per service (kept_bytes/service) and the
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
				times := []time.Time{start, start.Add(time.Minute)}
				for i := range n {
					tr.Add(fmt.Sprintf("project-%d/service-%06d", i%3, i), times, []float64{100, 200}, []float64{1 << 30, 1 << 30})
				}
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
