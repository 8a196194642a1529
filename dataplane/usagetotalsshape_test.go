package dataplane

import (
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// setService changes the first service as the next snapshots show it.
func (h *usageHarness) setService(change func(*apiclient.Service)) {
	h.host.setServices(func(list []fleet.Service) []fleet.Service {
		change(list[0].Service)
		return list
	})
}

// totalsNextTicks runs ticks an interval apart from an interval on, and
// returns how many totals each read.
func (h *usageHarness) totalsNextTicks(ticks int) []int {
	var out []int
	for range ticks {
		h.clock.Advance(5 * time.Minute)
		totals, _ := h.tickReads()
		out = append(out, totals)
	}
	return out
}

// TestUsageTotalsAfterShapeChange: a change of what sets a service's
// nodes' totals (its size, its nodes, its status) makes them due at the
// next tick, and they are read every interval until a read made an
// interval and the API's lag (7 minutes) after the change succeeded:
// here at 5, 10 and 15 minutes, not at 20 nor 25. Other changes cost no read.
func TestUsageTotalsAfterShapeChange(t *testing.T) {
	for name, change := range map[string]func(*apiclient.Service){
		"cpu":         func(s *apiclient.Service) { s.Resources[0].Spec.CPUMillis = ptr(apiclient.Int(4000)) },
		"memory":      func(s *apiclient.Service) { s.Resources[0].Spec.MemoryGBs = ptr(apiclient.Int(16)) },
		"shared":      func(s *apiclient.Service) { s.Resources[0].Spec = &apiclient.ResourceSpec{} },
		"replaced":    func(s *apiclient.Service) { s.Resources[0].ID = "r-new" },
		"ha replicas": func(s *apiclient.Service) { s.HAReplicas = &apiclient.HAReplicas{ReplicaCount: ptr(apiclient.Int(1))} },
		"a node more": func(s *apiclient.Service) { s.Resources = append(s.Resources, apiclient.Resource{ID: "r-2"}) },
		"status":      func(s *apiclient.Service) { s.Status = apiclient.ServiceConfiguring },
		"paused flag": func(s *apiclient.Service) { s.Paused = ptr(true) },
	} {
		h := newTotalsHarness(t, 1, usageSettings{})
		h.tick()
		h.setService(change)
		if got, want := h.totalsNextTicks(5), []int{2, 2, 2, 0, 0}; !equalInts(got, want) {
			t.Errorf("%s: from 5 minutes, %v totals read a tick, want %v", name, got, want)
		}
	}
	h := newTotalsHarness(t, 1, usageSettings{})
	h.tick()
	h.setService(func(s *apiclient.Service) { s.Name = "renamed"; s.Endpoint = &apiclient.Endpoint{Host: "h"} })
	if got := h.totalsNextTicks(5); !equalInts(got, []int{0, 0, 0, 0, 0}) {
		t.Errorf("a new name and endpoint: %v totals read a tick, want none", got)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUsageTotalsSettleOnSuccess: the totals keep being read after a
// change until a read late enough succeeds: one that fails does not end it.
func TestUsageTotalsSettleOnSuccess(t *testing.T) {
	h := newTotalsHarness(t, 1, usageSettings{})
	h.tick()
	h.setService(func(s *apiclient.Service) { s.Resources[0].Spec.CPUMillis = ptr(apiclient.Int(4000)) })
	got := h.totalsNextTicks(2) // 5 and 10 minutes: too soon
	h.fu.fail[apiclient.OpGetServiceMetricsSeries] = errBoom
	got = append(got, h.totalsNextTicks(1)...) // 15: late enough, failed
	delete(h.fu.fail, apiclient.OpGetServiceMetricsSeries)
	got = append(got, h.totalsNextTicks(2)...) // 20: succeeded; 25
	if want := []int{2, 2, 2, 2, 0}; !equalInts(got, want) {
		t.Errorf("from 5 minutes, with the read at 15 failed: %v totals read a tick, want %v", got, want)
	}
}

// TestUsageTotalsOfAResumedService: a paused service's totals are not read
// (nor exported); when it resumes they are read at once.
func TestUsageTotalsOfAResumedService(t *testing.T) {
	h := newTotalsHarness(t, 1, usageSettings{})
	h.tick()
	h.clock.Advance(5 * time.Minute)
	h.setService(func(s *apiclient.Service) { s.Status = apiclient.ServicePaused })
	if totals, others := h.tickReads(); totals+others != 0 {
		t.Errorf("paused: %d totals and %d other series read, want none", totals, others)
	}
	if n := len(usageOf(h.host.Snapshot()).Samples()); n != 0 {
		t.Errorf("paused: %d samples, want none", n)
	}
	h.clock.Advance(5 * time.Minute)
	h.setService(func(s *apiclient.Service) { s.Status = apiclient.ServiceReady })
	if totals, _ := h.tickReads(); totals != 2 {
		t.Errorf("resumed: %d totals read, want 2", totals)
	}
	if n := len(usageOf(h.host.Snapshot()).Samples()); n != 3 {
		t.Errorf("resumed: %d samples, want 3", n)
	}
}

// TestUsageTotalsKeptBetweenReads: between two reads of the totals they
// are exported with their last value, and the usage is checked against
// them: a CPU usage of 9 cores on a node of 2 is rejected.
func TestUsageTotalsKeptBetweenReads(t *testing.T) {
	h := newTotalsHarness(t, 1, usageSettings{})
	h.tick()
	h.clock.Advance(5 * time.Minute)
	now := h.clock.Now().Truncate(time.Minute)
	node := apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}
	h.fu.series["x_system_cpu_usage_millicores"] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{
		point(now.Add(-time.Minute), f64(600)), point(now, f64(9000))}}}
	if totals, _ := h.tickReads(); totals != 0 {
		t.Fatalf("%d totals read at 5 minutes, want none", totals)
	}
	got := map[string]float64{}
	for _, s := range usageOf(h.host.Snapshot()).Samples() {
		got[s.Suffix] = s.Value
	}
	if got[apiclient.SeriesCPUTotal] != 2000 || got[apiclient.SeriesMemoryTotal] != 8<<30 || got[apiclient.SeriesCPUUsage] != 600 {
		t.Errorf("samples %v, want the totals kept and the CPU usage's last possible value", got)
	}
	if n := h.u.rejected[rejectKey{"system_cpu_usage_millicores", rejectOverTotal}]; n != 1 {
		t.Errorf("%v over_total rejections, want 1", n)
	}
}

// TestUsageTotalsMaxStaleness: --collect.max-staleness drops a value whose
// reads failed for that long. A total is not read for most of an hour, so
// its age is not how long its reads failed: a total read 25 minutes ago
// stays while the other series' reads fail and they are dropped; once the
// total falls due, failed reads of it drop it after max-staleness.
func TestUsageTotalsMaxStaleness(t *testing.T) {
	// When does svc00's total fall due? A run with no failure says.
	h := newTotalsHarness(t, 1, usageSettings{})
	h.tick()
	due := time.Duration(0)
	for at := 5 * time.Minute; due == 0 && at <= 2*time.Hour; at += 5 * time.Minute {
		h.clock.Advance(5 * time.Minute)
		if totals, _ := h.tickReads(); totals > 0 {
			due = at
		}
	}
	if due < 30*time.Minute {
		t.Fatalf("the totals were read again at %s, want not within half an hour (nor never)", due)
	}

	h = newTotalsHarness(t, 1, usageSettings{})
	h.u.opts.MaxStaleness = 10 * time.Minute
	h.tick()
	h.fu.fail[apiclient.OpGetServiceMetricsSeries] = errBoom
	for at := 5 * time.Minute; at <= due+20*time.Minute; at += 5 * time.Minute {
		h.clock.Advance(5 * time.Minute)
		has := map[string]bool{}
		for _, s := range h.tick().Samples() {
			has[s.Suffix] = true
		}
		if want := at <= 10*time.Minute; has[apiclient.SeriesCPUUsage] != want {
			t.Errorf("at %s, failing since 5m: CPU usage exported %t, want %t", at, has[apiclient.SeriesCPUUsage], want)
		}
		// It fell due at the tick that read it or in the interval before.
		if at == due+10*time.Minute {
			continue
		}
		if want := at <= due+5*time.Minute; has[apiclient.SeriesCPUTotal] != want || has[apiclient.SeriesMemoryTotal] != want {
			t.Errorf("at %s, the totals due at %s: totals exported %v, want %t", at, due, has, want)
		}
	}
}

// TestUsageTotalsMaxStalenessAfterChange: after a change of the service's
// shape its totals are due at once, and failed reads drop them
// max-staleness after the change was seen, not after the last read.
func TestUsageTotalsMaxStalenessAfterChange(t *testing.T) {
	h := newTotalsHarness(t, 1, usageSettings{})
	h.u.opts.MaxStaleness = 10 * time.Minute
	h.tick()
	h.clock.Advance(5 * time.Minute)
	h.tick()
	h.setService(func(s *apiclient.Service) { s.Resources[0].Spec.CPUMillis = ptr(apiclient.Int(4000)) })
	h.fu.fail[apiclient.OpGetServiceMetricsSeries] = errBoom
	for at := 10 * time.Minute; at <= 25*time.Minute; at += 5 * time.Minute {
		h.clock.Advance(5 * time.Minute)
		has := false
		for _, s := range h.tick().Samples() {
			has = has || s.Suffix == apiclient.SeriesCPUTotal
		}
		if want := at <= 20*time.Minute; has != want {
			t.Errorf("at %s, the change seen at 10m: CPU total exported %t, want %t", at, has, want)
		}
	}
}
