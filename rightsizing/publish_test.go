package rightsizing

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
	"github.com/clouddb/clouddb_exporter/pricing"
)

func sizedService(id string, cpu, mem int64, ha int) fleet.Service {
	s := &apiclient.Service{ServiceID: id, RegionCode: "us-east-1", Status: apiclient.ServiceReady,
		Resources:  []apiclient.Resource{{ID: id + "-0", Spec: &apiclient.ResourceSpec{CPUMillis: fleettest.Int(cpu), MemoryGBs: fleettest.Int(mem)}}},
		HAReplicas: &apiclient.HAReplicas{ReplicaCount: fleettest.Int(int64(ha))}}
	return fleet.Service{Service: s}
}

func samplesOf(s *fleet.Snapshot) []string {
	var rec collector.Samples
	for _, g := range collector.Groups() {
		g.Collect(rec.Sink(), s)
	}
	var out []string
	for i := range rec.Len() {
		d, v, labels := rec.At(i)
		if strings.HasPrefix(d.Name(), "clouddb_service_rightsizing_") {
			out = append(out, fmt.Sprintf("%s%v %g", d.Name(), labels, v))
		}
	}
	return out
}

// TestPublisher: every service the usage reader has read gets its finding,
// recommended size and, with prices, saving; HA replicas follow the primary.
func TestPublisher(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	feed(tr, clock, testKey("p1", "big"), 0, days14, steady(300, 3*gib))
	feed(tr, clock, testKey("p1", "small"), 0, days14, steady(950, 3.8*gib))
	feed(tr, clock, testKey("p1", "new"), days14-600, days14, steady(300, 3*gib))
	prices, err := pricing.Parse([]byte("currency: USD\neffective_date: 2026-11-01\ncompute:\n  us-east-1: {\"1000/4\": 0.09, \"2000/8\": 0.18, \"4000/16\": 0.36}\nha_replica: 1.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	next := &fleettest.Recorder{}
	p := NewPublisher(next, tr, func() *pricing.Table { return prices })
	s := &fleet.Snapshot{ProjectID: "p1", Services: []fleet.Service{
		sizedService("big", 4000, 16, 1), sizedService("new", 4000, 16, 0), sizedService("small", 1000, 4, 0), sizedService("unread", 1000, 4, 0),
	}}
	p.SetSnapshot(s)
	if s.Data != nil {
		t.Error("the poller's snapshot was modified")
	}
	got := samplesOf(next.Got[0])
	wantSamples(t, got,
		"clouddb_service_rightsizing_finding[p1 big over_provisioned] 1",
		"clouddb_service_rightsizing_finding[p1 big optimal] 0",
		"clouddb_service_rightsizing_recommended_cpu_millis[p1 big] 1000",
		"clouddb_service_rightsizing_recommended_memory_gbs[p1 big] 4",
		"clouddb_service_rightsizing_recommended_size_info[p1 big 1000 4] 1",
		"clouddb_service_rightsizing_saving_per_hour[p1 big] 0.54",
		"clouddb_service_rightsizing_coverage_ratio[p1 big] 1",
		"clouddb_service_rightsizing_coverage_ratio[p1 new] 0.035", // 600 minutes of 12 days, to a thousandth
		"clouddb_service_rightsizing_finding[p1 small under_provisioned] 1",
		"clouddb_service_rightsizing_recommended_cpu_millis[p1 small] 2000",
		"clouddb_service_rightsizing_saving_per_hour[p1 small] -0.09",
		"clouddb_service_rightsizing_finding[p1 new insufficient_data] 1",
	)
	for _, g := range got {
		if strings.Contains(g, "[p1 unread") || strings.Contains(g, "recommended_cpu_millis[p1 new]") || strings.Contains(g, "saving_per_hour[p1 new]") {
			t.Errorf("unexpected sample %s", g)
		}
	}
	problems, err := testutil.CollectAndLint(collectortest.NewFleetCollectorOf(next.Got[0]), "clouddb_service_rightsizing_finding", "clouddb_service_rightsizing_saving_per_hour")
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}

	p.RemoveProject("p1")
	if tr.Len() != 0 || !slices.Equal(next.Removed, []string{"p1"}) {
		t.Errorf("after removing p1: %d windows, removed %v", tr.Len(), next.Removed)
	}
}

// listedSnapshot is p1 with the services ids, its services list last read
// at read, successfully or not.
func listedSnapshot(read time.Time, success bool, ids ...string) *fleet.Snapshot {
	s := &fleet.Snapshot{ProjectID: "p1", Parts: []fleet.PartHealth{{Name: fleet.PartServices, Success: success, LastSuccess: read}}}
	for _, id := range ids {
		s.Services = append(s.Services, sizedService(id, 1000, 4, 0))
	}
	return s
}

// TestPublisherForgetsDeletedServices: a service's window is dropped once
// two complete lists of its project's services in a row lack it, as the
// change timeline decides a deletion; a failed list, a snapshot published
// again from the same list, a snapshot without the services part and
// another project's list drop nothing.
func TestPublisherForgetsDeletedServices(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	for _, key := range []string{"p1/a", "p1/back", "p1/gone", "p2/gone"} {
		feed(tr, clock, key, 0, 60, steady(300, gib))
	}
	p := NewPublisher(&fleettest.Recorder{}, tr, func() *pricing.Table { return nil })
	read := func(i int) time.Time { return start.Add(time.Duration(i) * time.Minute) }
	for i, step := range []struct {
		s    *fleet.Snapshot
		kept []string
	}{
		{listedSnapshot(read(1), true, "a", "back"), []string{"p1/a", "p1/back", "p1/gone", "p2/gone"}},
		// The same list again (a publish between reads), a failed one, none.
		{listedSnapshot(read(1), true, "a", "back"), []string{"p1/a", "p1/back", "p1/gone", "p2/gone"}},
		{listedSnapshot(read(2), false, "a"), []string{"p1/a", "p1/back", "p1/gone", "p2/gone"}},
		{&fleet.Snapshot{ProjectID: "p1"}, []string{"p1/a", "p1/back", "p1/gone", "p2/gone"}},
		// The second complete list without it.
		{listedSnapshot(read(3), true, "a", "back"), []string{"p1/a", "p1/back", "p2/gone"}},
		// Missed once, listed again, missed once: kept.
		{listedSnapshot(read(4), true, "a"), []string{"p1/a", "p1/back", "p2/gone"}},
		{listedSnapshot(read(5), true, "a", "back"), []string{"p1/a", "p1/back", "p2/gone"}},
		{listedSnapshot(read(6), true, "a"), []string{"p1/a", "p1/back", "p2/gone"}},
		{listedSnapshot(read(7), true), []string{"p1/a", "p2/gone"}},
		{listedSnapshot(read(8), true), []string{"p2/gone"}},
	} {
		p.SetSnapshot(step.s)
		var kept []string
		for _, key := range []string{"p1/a", "p1/back", "p1/gone", "p2/gone"} {
			if tr.windowOf(key) != nil {
				kept = append(kept, key)
			}
		}
		if !slices.Equal(kept, step.kept) || tr.Len() != len(step.kept) {
			t.Errorf("step %d: windows of %v (%d); want %v", i, kept, tr.Len(), step.kept)
		}
	}
	// The state saved holds what is kept.
	b, _ := tr.MarshalBinary()
	restarted := NewTracker(testConfig(t), clock.Now)
	if err := restarted.UnmarshalBinary(b); err != nil || restarted.Len() != 1 || restarted.windowOf("p2/gone") == nil {
		t.Errorf("read back %d windows (%v); want p2/gone's alone", restarted.Len(), err)
	}
}

// wantSamples fails t for each of want that got lacks.
func wantSamples(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no sample %s in\n%s", w, strings.Join(got, "\n"))
		}
	}
}
