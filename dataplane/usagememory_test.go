package dataplane

import (
	"testing"
	"unsafe"

	"github.com/clouddb/clouddb_exporter/config"
)

// TestUsageServicesShareNameLists: services whose available series have
// the same names share one list of them (a list of 16 strings a service
// was 2.5 MB at 10,000).
func TestUsageServicesShareNameLists(t *testing.T) {
	h := newUsageHarness(t, 3, 0, config.Usage{Series: []string{"database_qps", "database_job_success"}},
		"x_database_qps", "x_database_job_success")
	h.tick()
	a, b := h.u.services["svc00"], h.u.services["svc02"]
	if a == nil || b == nil || len(a.avail.names) != 2 || len(b.avail.names) != 2 {
		t.Fatalf("available series not read: %+v, %+v", a, b)
	}
	if &a.avail.names[0] != &b.avail.names[0] {
		t.Errorf("two services with the same available series keep a list each")
	}
}

// TestUsagePlanMadeAtOnce: a read's plan, kept while the read lasts, is
// made at its size at once (it grew by doubling, twice its size at its
// peak), of 24-byte tasks that point at their service.
func TestUsagePlanMadeAtOnce(t *testing.T) {
	const services = 200
	h := newUsageHarness(t, services, 0, config.Usage{Series: []string{"database_qps", "database_job_success"}},
		"x_database_qps", "x_database_job_success")
	h.tick()
	ids := h.u.sortedIDs()
	now := h.clock.Now()
	if n := len(h.u.plan(ids, now, -1).tasks); n != 2*services {
		t.Fatalf("%d tasks planned, want %d", n, 2*services)
	}
	if allocs := testing.AllocsPerRun(5, func() { h.u.plan(ids, now, -1) }); allocs > 2 {
		t.Errorf("a plan made %.0f allocations, want its list at once", allocs)
	}
	if size := unsafe.Sizeof(usageTask{}); size > 24 {
		t.Errorf("a task is %d bytes, want at most 24", size)
	}
}

// TestUsageAskAfterPublishCopiesNothing: what the reader keeps of a series
// besides its samples (when asked, how often, when read) is not published,
// so recording an ask after a publish copies nothing; a new answer copies
// only the service's published headers (the service's whole state was
// copied, 80 B a series, 12.8 MB at 10,000 services with two alive).
func TestUsageAskAfterPublishCopiesNothing(t *testing.T) {
	h := newUsageHarness(t, 2, 0, config.Usage{Series: []string{"database_qps", "database_job_success"}},
		"x_database_qps", "x_database_job_success")
	h.tick()
	h.u.build(false)
	svc := h.u.services["svc00"]
	if svc == nil || len(svc.series) == 0 {
		t.Fatal("no series kept")
	}
	allocs := testing.AllocsPerRun(10, func() {
		svc.shared = true
		s := h.u.seriesAt(svc, 0)
		s.asked++
		s.reads++
	})
	if allocs != 0 {
		t.Errorf("recording an ask after a publish made %.0f allocations", allocs)
	}
}
