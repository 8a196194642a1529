package dataplane

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestUsageRunsKeepTheOrder: what a read holds of its plan gives back its
// tasks' services and series in the plan's order, whatever that order.
func TestUsageRunsKeepTheOrder(t *testing.T) {
	services := []*usageService{{id: "a"}, {id: "b"}, {id: "c"}}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		var tasks []usageTask
		for range rng.IntN(80) {
			idx := uint16(rng.IntN(5))
			if rng.IntN(10) == 0 {
				idx = uint16(rng.IntN(100))
			}
			tasks = append(tasks, usageTask{svc: services[rng.IntN(len(services))], idx: idx})
			if rng.IntN(3) > 0 && idx < 99 {
				tasks = append(tasks, usageTask{svc: tasks[len(tasks)-1].svc, idx: idx + 1 + uint16(rng.IntN(40))})
			}
		}
		runs := newUsageRuns(tasks)
		if runs.len() != len(tasks) {
			t.Fatalf("case %d: %d tasks held, want %d", n, runs.len(), len(tasks))
		}
		for i, want := range tasks {
			got, ok := runs.next()
			if !ok || got.svc != want.svc || got.idx != want.idx {
				t.Fatalf("case %d: task %d is %s %d (%v), want %s %d", n, i, got.svc.id, got.idx, ok, want.svc.id, want.idx)
			}
		}
		if got, ok := runs.next(); ok {
			t.Fatalf("case %d: a task beyond the plan: %s %d", n, got.svc.id, got.idx)
		}
	}
}

// TestUsageRunsHoldAServiceAtOnce: a read held its plan while it lasted,
// a 16-byte task a series (2.4 MB at 10,000 services of 15 series); it
// holds a run of a service's series, 16 bytes, which a plan's order
// keeps together.
func TestUsageRunsHoldAServiceAtOnce(t *testing.T) {
	const services = 200
	h := newUsageHarness(t, services, 0, usageSettings{Series: []string{"database_qps", "database_job_success", "system_disk_usage_bytes"}},
		"x_database_qps", "x_database_job_success", "x_system_disk_usage_bytes")
	h.tick()
	tasks := h.u.plan(h.u.sortedIDs(), h.clock.Now(), -1).tasks
	if len(tasks) != 3*services {
		t.Fatalf("%d tasks planned, want %d", len(tasks), 3*services)
	}
	if n := len(newUsageRuns(tasks).runs); n != services {
		t.Errorf("%d runs held, want one a service, %d", n, services)
	}
	if size := unsafe.Sizeof(usageRun{}); size > 16 {
		t.Errorf("a run is %d bytes, want at most 16", size)
	}
}
