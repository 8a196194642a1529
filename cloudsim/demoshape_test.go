package cloudsim

import (
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/rightsizing"
)

// TestDemoShapesHoldAllDay: the demo's oversized service fits the next size
// down, and its undersized one outgrows its size, at every minute of the
// day, with the rightsizing's default headroom: a finding that followed the
// clock failed the demo's tests for hours a day.
func TestDemoShapesHoldAllDay(t *testing.T) {
	idle := &service{id: "orders", curve: idleLoad, cpuMillis: 2000, memoryGBs: 8}
	busy := &service{id: "search", curve: busyLoad, cpuMillis: 1000, memoryGBs: 4}
	grow := 1 + rightsizing.DefaultHeadroom
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for m := range 24 * 60 {
		at := day.Add(time.Duration(m) * time.Minute)
		// Memory use is 40% of the size plus half the load (bucketValue).
		if need := 0.4 + 0.5*idle.load(at); float64(idle.memoryGBs)*need*grow > float64(idle.memoryGBs)/2 {
			t.Fatalf("%s: the idle service's memory need %.3f of its size does not fit half of it", at.Format("15:04"), need*grow)
		}
		if need := busy.load(at) * grow; need <= 1 {
			t.Fatalf("%s: the busy service's CPU need %.3f of its size fits it", at.Format("15:04"), need)
		}
	}
}
