package exposition

import (
	"log/slog"
	"slices"
	"strings"
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
	old := e.renderings()

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
	// Only their lines were written: the other families' samples are the same.
	newRaw := 0
	for k, p := range e.renderings() {
		if o, ok := old[k]; ok && o.form != p.form && o.crc != p.crc {
			newRaw += p.raw
		}
	}
	if n := e.linesNow(); newRaw == 0 || n != newRaw {
		t.Errorf("%d bytes of lines written, want the changed families' %d", n, newRaw)
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

// linesNow returns the bytes of lines e's last chunk rendering wrote.
func (e *Handler) linesNow() int {
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	return len(e.render.w.buf)
}

// A chunk rendered again for a change to another family writes the family
// of an invalid series again, and says so again.
func TestExpositionInvalidSeriesAfterChange(t *testing.T) {
	logs := &countingHandler{}
	e := New(nil, slog.New(logs))
	for i, status := range []string{apiclient.ServiceReady, apiclient.ServiceUnstable} {
		s := fleettest.Synthetic("p", 10)
		s.Services[0].Name = "bad\xff"
		s.Services[1].Status = status
		e.SetSnapshot(s)
		if body := scrapePrometheus(t, e); strings.Count(body, "clouddb_service_info{") != 9 {
			t.Errorf("scrape %d: not the 9 valid clouddb_service_info series", i)
		}
		if n := logs.count.Load(); n != int32(i+1) {
			t.Errorf("scrape %d: %d log records, want %d", i, n, i+1)
		}
	}
}
