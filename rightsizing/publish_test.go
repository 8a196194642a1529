package rightsizing

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
	"github.com/clouddb/clouddb_exporter/pricing"
)

type recordingPublisher struct {
	got     []*fleet.Snapshot
	removed []string
}

func (r *recordingPublisher) SetSnapshot(s *fleet.Snapshot) { r.got = append(r.got, s) }
func (r *recordingPublisher) RemoveProject(projectID string) {
	r.removed = append(r.removed, projectID)
}

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
	feed(tr, clock, Key("p1", "big"), 0, days14, steady(300, 3*gib))
	feed(tr, clock, Key("p1", "small"), 0, days14, steady(950, 3.8*gib))
	feed(tr, clock, Key("p1", "new"), days14-600, days14, steady(300, 3*gib))
	prices, err := pricing.Parse([]byte("currency: USD\neffective_date: 2026-11-01\ncompute:\n  us-east-1: {\"1000/4\": 0.09, \"2000/8\": 0.18, \"4000/16\": 0.36}\nha_replica: 1.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	next := &recordingPublisher{}
	p := NewPublisher(next, tr, func() *pricing.Table { return prices })
	s := &fleet.Snapshot{ProjectID: "p1", Services: []fleet.Service{
		sizedService("big", 4000, 16, 1), sizedService("new", 4000, 16, 0), sizedService("small", 1000, 4, 0), sizedService("unread", 1000, 4, 0),
	}}
	p.SetSnapshot(s)
	if s.Data != nil {
		t.Error("the poller's snapshot was modified")
	}
	got := samplesOf(next.got[0])
	for _, want := range []string{
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
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no sample %s in\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, g := range got {
		if strings.Contains(g, "[p1 unread") || strings.Contains(g, "recommended_cpu_millis[p1 new]") || strings.Contains(g, "saving_per_hour[p1 new]") {
			t.Errorf("unexpected sample %s", g)
		}
	}
	problems, err := testutil.CollectAndLint(collectortest.NewFleetCollectorOf(next.got[0]), "clouddb_service_rightsizing_finding", "clouddb_service_rightsizing_saving_per_hour")
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}

	p.RemoveProject("p1")
	if tr.Len() != 0 || !slices.Equal(next.removed, []string{"p1"}) {
		t.Errorf("after removing p1: %d windows, removed %v", tr.Len(), next.removed)
	}
}
