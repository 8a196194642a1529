package dataplane

import (
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestUsageServicesShareNameLists: services whose available series have
// the same names share one list of them (a list of 16 strings a service
// was 2.5 MB at 10,000).
func TestUsageServicesShareNameLists(t *testing.T) {
	h := newUsageHarness(t, 3, 0, usageSettings{Series: []string{"database_qps", "database_job_success"}},
		"x_database_qps", "x_database_job_success")
	h.tick()
	a, b := h.u.services["svc00"], h.u.services["svc02"]
	if a == nil || b == nil || len(a.avail.list()) != 2 || len(b.avail.list()) != 2 {
		t.Fatalf("available series not read: %+v, %+v", a, b)
	}
	if a.avail.names != b.avail.names {
		t.Errorf("two services with the same available series keep a list each")
	}
	// A service is 72 bytes, in the 80-byte size class: 112 with its
	// list's header and a time.Time of when it was read.
	if size := unsafe.Sizeof(usageService{}); size > 80 {
		t.Errorf("a service is %d bytes, want at most 80", size)
	}
}

// TestUsageServicesShareEnds: services whose series have as many points
// each share one list of where their series end (32 B a service, 320 KB
// at 10,000), which is never modified in place.
func TestUsageServicesShareEnds(t *testing.T) {
	h := newUsageHarness(t, 3, 0, usageSettings{Series: []string{"database_qps", "database_job_success"}},
		"x_database_qps", "x_database_job_success")
	now := h.clock.Now().Truncate(time.Minute)
	node := apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}
	h.fu.series["x_database_qps"] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{point(now, f64(4))}}}
	h.tick()
	a, b := h.u.services["svc00"], h.u.services["svc02"]
	if a == nil || b == nil || a.pub == nil || b.pub == nil || len(a.pub.Ends) != 2 {
		t.Fatalf("no points published: %+v, %+v", a, b)
	}
	if &a.pub.Ends[0] != &b.pub.Ends[0] {
		t.Errorf("two services with as many points a series keep a list of ends each: %v, %v", a.pub.Ends, b.pub.Ends)
	}
}

// TestUsagePlanMadeAtOnce: a read's plan, held until the read starts, is
// made at its size at once (it grew by doubling, twice its size at its
// peak), of 16-byte tasks that point at their service (24 before, 32 at
// first).
func TestUsagePlanMadeAtOnce(t *testing.T) {
	const services = 200
	h := newUsageHarness(t, services, 0, usageSettings{Series: []string{"database_qps", "database_job_success"}},
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
	if size := unsafe.Sizeof(usageTask{}); size > 16 {
		t.Errorf("a task is %d bytes, want at most 16", size)
	}
}

// TestUsageAskAfterPublishCopiesNothing: what the reader keeps of a series
// besides its samples (when asked, how often, when read) is not published,
// so recording an ask after a publish copies nothing (the service's whole
// state was copied, 80 B a series, 12.8 MB at 10,000 services with two
// alive). A new answer of as many points changes them in place, or copies
// the service's points and header if a publish holds them.
func TestUsageAskAfterPublishCopiesNothing(t *testing.T) {
	h := newUsageHarness(t, 2, 0, usageSettings{Series: []string{"database_qps", "database_job_success"}},
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
	points := []UsagePoint{{Value: 1}}
	h.u.setPoints(svc, 1, points)
	for shared, want := range map[bool]float64{false: 0, true: 2} {
		if allocs := testing.AllocsPerRun(10, func() { svc.shared = shared; h.u.setPoints(svc, 1, points) }); allocs != want {
			t.Errorf("an answer of as many points (published: %v) made %.0f allocations, want %.0f", shared, allocs, want)
		}
	}
}

// TestUsageKeepsFewBytesPerSeries: besides its points (24 B each), the
// reader keeps a series' state and its share of what it published in
// under 33 B (about 106 B before: a 24 B state, a 56 B published header
// and a pointer to it, 16 MB at 10,000 services; 35.7 B with a list of
// ends a service, not one a shape, and a 112-byte service).
func TestUsageKeepsFewBytesPerSeries(t *testing.T) {
	const services = 1000
	var names []string
	for _, suf := range apiclient.UsageSeriesSuffixes {
		names = append(names, "clouddb"+suf)
	}
	u, kept := readUsageOnce(services, 2, names)
	points := len(usageOf(u.host.Snapshot()).Samples())
	if points != services*2*len(names) {
		t.Fatalf("%d points published, want %d", points, services*2*len(names))
	}
	perSeries := (float64(kept) - 24*float64(points)) / float64(services*len(names))
	t.Logf("%.1f bytes a series besides its points", perSeries)
	if perSeries > 33 {
		t.Errorf("the reader keeps %.1f bytes a series besides its points, want at most 33", perSeries)
	}
	runtime.KeepAlive(u)
}

// TestUsageReadHoldsRunsOfItsPlan: halfway through a read (not the first)
// what it holds over what the reader kept before is the copies of the
// points it changed, published at the end (no clock moves, no publish on
// the way: 30 points, 820 B a service), and its plan: a run of a
// service's series, not a 16-byte task a series (240 B a service more,
// and before that two lists appended anew, 275).
func TestUsageReadHoldsRunsOfItsPlan(t *testing.T) {
	held := heldDuringRead(t, 1000)
	t.Logf("a read holds %.0f bytes a service", held)
	if held > 900 {
		t.Errorf("a read holds %.0f bytes a service, want at most 900", held)
	}
}

// TestUsageSetPointsKeepsPublished: an answer of another count moves the
// service's later series, and no answer changes what a publish holds.
func TestUsageSetPointsKeepsPublished(t *testing.T) {
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"database_qps", "database_num_connections", "database_job_success"}})
	svc := h.u.service("svc00")
	want := make([][]UsagePoint, 3)
	var held, was []*UsageService
	for n, step := range []struct {
		series  int
		values  []float64
		publish bool
	}{
		{1, []float64{1, 2}, false}, {0, []float64{3}, true}, {2, []float64{4, 5, 6}, false}, {1, nil, true},
		{1, []float64{7}, true}, {1, []float64{8}, false}, {1, []float64{9}, true}, {0, nil, false}, {2, nil, true}, {1, nil, false},
	} {
		if step.publish && svc.pub != nil {
			svc.shared = true
			held = append(held, svc.pub)
			was = append(was, &UsageService{ID: svc.pub.ID, Points: slices.Clone(svc.pub.Points), Ends: slices.Clone(svc.pub.Ends)})
		}
		var points []UsagePoint
		for _, v := range step.values {
			points = append(points, UsagePoint{Value: v})
		}
		h.u.setPoints(svc, step.series, points)
		want[step.series] = points
		for i := range want {
			var got []UsagePoint
			if svc.pub != nil {
				got = svc.pub.Series(i)
			}
			if !slices.Equal(got, want[i]) {
				t.Errorf("step %d: series %d holds %v, want %v", n, i, got, want[i])
			}
		}
		for j := range held {
			if !slices.Equal(held[j].Points, was[j].Points) || !slices.Equal(held[j].Ends, was[j].Ends) {
				t.Errorf("step %d: the service published at its step %d changed", n, j)
			}
		}
	}
	if svc.pub != nil {
		t.Errorf("a service with no points left keeps %+v", svc.pub)
	}
}
