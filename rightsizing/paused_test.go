package rightsizing

import (
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/fleettest"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// TestPausedServiceSavesNothing: a PAUSED (or PAUSING) service pays no
// compute (its estimate is storage only), so resizing it saves nothing
// now, whatever its window says of the size it should run at.
func TestPausedServiceSavesNothing(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	for _, id := range []string{"paused", "pausing", "ready"} {
		feed(tr, clock, testKey("p1", id), 0, days14, steady(300, 3*gib))
		clock.Advance(-days14 * 60e9) // the next service's fortnight is the same one
	}
	clock.Advance(days14 * 60e9)
	prices, err := pricing.Parse([]byte("currency: USD\neffective_date: 2026-11-01\ncompute:\n  us-east-1: {\"1000/4\": 0.09, \"4000/16\": 0.36}\nha_replica: 1.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	next := &fleettest.Recorder{}
	p := NewPublisher(next, tr, func() *pricing.Table { return prices })
	status := func(svc fleet.Service, st string) fleet.Service { svc.Status = st; return svc }
	p.SetSnapshot(&fleet.Snapshot{ProjectID: "p1", Services: []fleet.Service{
		status(sizedService("paused", 4000, 16, 1), apiclient.ServicePaused),
		status(sizedService("pausing", 4000, 16, 0), apiclient.ServicePausing),
		sizedService("ready", 4000, 16, 0),
	}})
	got := samplesOf(next.Got[0])
	wantSamples(t, got,
		"clouddb_service_rightsizing_finding[p1 paused over_provisioned] 1",
		"clouddb_service_rightsizing_saving_per_hour[p1 paused] 0",
		"clouddb_service_rightsizing_saving_per_hour[p1 pausing] 0",
		"clouddb_service_rightsizing_saving_per_hour[p1 ready] 0.27",
	)
}
