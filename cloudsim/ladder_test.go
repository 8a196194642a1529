package cloudsim

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// TestDemoResizesStayPriced: the demo's churn and timeline resize along the
// sizes the example price file prices, so that --simulate's cost estimate
// leaves nothing out (clouddb_pricing_unpriced_resources 0) however long it
// runs: hours of churn steps, a timeline resize every few minutes.
func TestDemoResizesStayPriced(t *testing.T) {
	b, err := os.ReadFile("../deploy/pricing.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	prices, err := pricing.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeclock.New(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	sim := New(Options{Credentials: []Credential{rwCred}, Seed: 1, Clock: clock.Now})
	sim.LoadDemo(testProject)
	run := &timelineRun{sim: sim, cred: rwCred}
	rng := newRand(1, "churn")
	var blips []churnBlip
	resized := map[string]bool{}
	initial := map[string]int64{}
	for i := range 1000 {
		sim.mu.Lock()
		blips = sim.churnStep(rng, blips)
		for _, svc := range sim.projects[testProject].services {
			if svc.shared {
				continue
			}
			size := pricing.Size{CPUMillis: svc.cpuMillis, MemoryGBs: svc.memoryGBs}
			if _, ok := prices.Compute(svc.region, size); !ok {
				t.Errorf("step %d: %s is %s in %s, which the example price file does not price", i, svc.name, size, svc.region)
			}
			if first, ok := initial[svc.id]; !ok {
				initial[svc.id] = svc.cpuMillis
			} else if first != svc.cpuMillis {
				resized[svc.name] = true
			}
			for _, rs := range svc.replicaSets {
				if _, ok := prices.Compute(svc.region, pricing.Size{CPUMillis: rs.cpuMillis, MemoryGBs: rs.memoryGBs}); !ok {
					t.Errorf("step %d: replica set %s is %d/%d in %s, which the example price file does not price", i, rs.name, rs.cpuMillis, rs.memoryGBs, svc.region)
				}
			}
		}
		sim.mu.Unlock()
		if t.Failed() {
			t.FailNow()
		}
		if i%10 == 0 { // every 5 minutes, as the timeline's round
			if err := run.resize(); err != nil && !errors.As(err, new(stepError)) {
				t.Fatal(err)
			}
		}
		clock.Advance(30 * time.Second) // the demo's churn interval
	}
	if len(resized) < 3 {
		t.Errorf("only %v were resized: the test saw too few resizes to tell", resized)
	}
}
