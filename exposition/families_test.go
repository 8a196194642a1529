package exposition

import (
	"slices"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// TestChangedChunkDeflatesChangedFamiliesOnly: a usage read's first
// publishes change the nodes' totals alone; the chunk of a service whose
// CPU total moved deflates that family and the buckets' times again, and
// keeps its other families' pieces; the exposition is the one a new
// handler renders.
func TestChangedChunkDeflatesChangedFamiliesOnly(t *testing.T) {
	t.Parallel()
	snap := func() *fleet.Snapshot { return dataplanetest.WithDataPlane(fleettest.Synthetic("p", 500)) }
	e := New(nil, nil)
	e.SetSnapshot(snap())
	scrapePrometheus(t, e)
	before, deflated := e.statsNow(), e.deflatedNow()

	changed := snap()
	u := fleet.DataOf[dataplane.Usage](changed, dataplane.PartUsage)
	svc := u.Services[123]
	total := svc.Series(slices.Index(u.Suffixes, apiclient.SeriesCPUTotal))
	for i := range total {
		total[i].Value++
		total[i].Bucket += 60e9
	}
	e.SetSnapshot(changed)
	body := scrapePrometheus(t, e)
	after := e.statsNow()
	if n := after.changed - before.changed; n != 1 {
		t.Fatalf("%d chunks changed, want 1", n)
	}
	if n := e.deflatedNow() - deflated; n != 2 {
		t.Errorf("%d pieces deflated, want 2 (the CPU totals, the buckets' times)", n)
	}
	fresh := New(nil, nil)
	fresh.SetSnapshot(changed)
	if want := scrapePrometheus(t, fresh); body != want {
		t.Errorf("the exposition (%d bytes) differs from a new handler's (%d bytes)", len(body), len(want))
	}
}

// deflatedNow returns how many pieces e has deflated.
func (e *Handler) deflatedNow() int {
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	return e.render.deflated
}
