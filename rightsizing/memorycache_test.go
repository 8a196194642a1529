package rightsizing

import (
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// TestMemoryNearItsSize pins what docs/cost.md promises of a service whose
// memory use sits near its size (a cache that fills memory, if the provider
// counts it): with the default headroom, a peak above 1 / 1.15 (about 87%)
// of the size needs the next size up, whatever the CPU; at or below it, the
// size stays. Never a shrink.
func TestMemoryNearItsSize(t *testing.T) {
	current := pricing.Size{CPUMillis: 2000, MemoryGBs: 8}
	for _, c := range []struct {
		name  string
		share float64 // of the size's memory, at every minute
		want  string
		size  pricing.Size
	}{
		{"at 86% of its size", 0.86, Optimal, current},
		{"at 88% of its size", 0.88, UnderProvisioned, pricing.Size{CPUMillis: 4000, MemoryGBs: 16}},
		{"full", 0.99, UnderProvisioned, pricing.Size{CPUMillis: 4000, MemoryGBs: 16}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := fakeclock.New(start)
			tr := NewTracker(testConfig(t), clock.Now)
			// Idle CPU: only memory could keep the size or grow it.
			feed(tr, clock, "s", 0, days14, steady(100, c.share*8*gib))
			r := tr.recommend("s", current)
			if r.Finding != c.want || r.Size != c.size {
				t.Errorf("%s %s (memory need %.2f GiB); want %s %s", r.Finding, r.Size, r.MemoryNeed/gib, c.want, c.size)
			}
		})
	}
}
