package changes

import (
	"fmt"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var t0 = time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)

func intp(n int64) *apiclient.Int { i := apiclient.Int(n); return &i }

func svc(id, name string, cpu, mem int64) *apiclient.Service {
	return &apiclient.Service{ServiceID: id, Name: name, Status: apiclient.ServiceReady,
		Resources: []apiclient.Resource{{ID: "r", Spec: &apiclient.ResourceSpec{CPUMillis: intp(cpu), MemoryGBs: intp(mem)}}}}
}

// snapAt builds a snapshot taken at minute m whose services list is healthy
// (and read whole at m) unless failed.
func snapAt(m int, failed bool, services ...*apiclient.Service) *fleet.Snapshot {
	at := t0.Add(time.Duration(m) * time.Minute)
	s := &fleet.Snapshot{ProjectID: "p1", Taken: at, Read: at}
	for _, v := range services {
		s.Services = append(s.Services, fleet.Service{Service: v})
	}
	h := fleet.PartHealth{Name: fleet.PartServices, Success: !failed, LastSuccess: at}
	if failed {
		h.LastSuccess = t0
	}
	s.Parts = append(s.Parts, h)
	return s
}

func kinds(events []Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.ObjectType+"/"+e.ObjectID+"/"+e.Kind)
	}
	return out
}

func expectKinds(t *testing.T, got []Event, want ...string) {
	t.Helper()
	if len(got)+len(want) > 0 && fmt.Sprint(kinds(got)) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", kinds(got), want)
	}
}

func TestFirstCompleteReadIsABaseline(t *testing.T) {
	d := newDiffer("p1")
	expectKinds(t, d.observe(snapAt(0, false, svc("a", "a", 2000, 8), svc("b", "b", 1000, 4))))
	small := svc("a", "a", 1000, 4)
	got := d.observe(snapAt(1, false, small, svc("b", "b", 1000, 4)))
	expectKinds(t, got, "service/a/resized")
	e := got[0]
	if e.Before["cpu_millis"] != int64(2000) || e.After["memory_gbs"] != int64(4) {
		t.Errorf("before %v after %v", e.Before, e.After)
	}
	if e.WindowStart == nil || !e.WindowStart.Equal(t0) {
		t.Errorf("window_start %v, want the previous complete read %v", e.WindowStart, t0)
	}
	// The same values again: nothing.
	expectKinds(t, d.observe(snapAt(2, false, svc("a", "a", 1000, 4), svc("b", "b", 1000, 4))))
}

func TestNoCreateOrDeleteWithoutCompleteReads(t *testing.T) {
	d := newDiffer("p1")
	a, b := svc("a", "a", 1000, 4), svc("b", "b", 1000, 4)
	d.observe(snapAt(0, false, a, b))
	// A failed list (an outage, a cut list): whatever the snapshot holds.
	expectKinds(t, d.observe(snapAt(1, true)))
	expectKinds(t, d.observe(snapAt(2, true, a)))
	// One complete list lacking b is not enough.
	expectKinds(t, d.observe(snapAt(3, false, a)))
	expectKinds(t, d.observe(snapAt(4, true, a)))
	// b is back: nothing happened.
	expectKinds(t, d.observe(snapAt(5, false, a, b)))
	expectKinds(t, d.observe(snapAt(6, false, a)))
	got := d.observe(snapAt(7, false, a))
	expectKinds(t, got, "service/b/deleted")
	if !got[0].WindowStart.Equal(t0.Add(5 * time.Minute)) {
		t.Errorf("window_start %v, want the last read that had it", got[0].WindowStart)
	}
}

func TestCreatedAfterTheBaseline(t *testing.T) {
	d := newDiffer("p1")
	a := svc("a", "a", 1000, 4)
	d.observe(snapAt(0, false, a))
	fork := svc("f", "fork", 1000, 4)
	fork.ForkedFrom = &apiclient.ForkedFrom{ProjectID: "p1", ServiceID: "a"}
	fork.Created = apiclient.Time{Time: t0.Add(30 * time.Second)}
	// Seen first by a failed list's snapshot (an admin refresh): not yet.
	expectKinds(t, d.observe(snapAt(1, true, a, fork)))
	got := d.observe(snapAt(2, false, a, fork))
	expectKinds(t, got, "service/f/created")
	if got[0].EffectiveTime == nil || !got[0].EffectiveTime.Equal(fork.Created.Time) {
		t.Errorf("effective_time %v", got[0].EffectiveTime)
	}
	if ff, _ := got[0].After["forked_from"].(Fields); ff["service_id"] != "a" {
		t.Errorf("after %v: want the parent", got[0].After)
	}
}

func TestGetNotFoundConfirmsADeletion(t *testing.T) {
	d := newDiffer("p1")
	a, b := svc("a", "a", 1000, 4), svc("b", "b", 1000, 4)
	d.observe(snapAt(0, false, a, b))
	// b leaves between lists, the services part healthy: a 404 on its get.
	s := snapAt(0, false, a)
	s.Taken = t0.Add(30 * time.Second)
	expectKinds(t, d.observe(s))
	expectKinds(t, d.observe(snapAt(1, false, a)), "service/b/deleted")
}

func TestFieldsThatDidNotDecodeAreNotChanges(t *testing.T) {
	d := newDiffer("p1")
	d.observe(snapAt(0, false, svc("a", "a", 2000, 8)))
	bad := svc("a", "a", 0, 0)
	bad.Resources[0].Spec.CPUMillis = nil
	bad.Dropped = []apiclient.FieldError{{Field: "resources.0.spec.cpu_millis", Err: "not a number"}}
	expectKinds(t, d.observe(snapAt(1, false, bad)))
	// Compared with the last value that decoded.
	expectKinds(t, d.observe(snapAt(2, false, svc("a", "a", 2000, 8))))
	expectKinds(t, d.observe(snapAt(3, false, svc("a", "a", 4000, 8))), "service/a/resized")
}

func TestEveryServiceKind(t *testing.T) {
	d := newDiffer("p1")
	a := svc("a", "a", 1000, 4)
	d.observe(snapAt(0, false, a))
	b := svc("a", "b", 1000, 4)
	b.Status = apiclient.ServiceUnstable
	b.HAReplicas = &apiclient.HAReplicas{ReplicaCount: intp(2), SyncReplicaCount: intp(1)}
	b.ConnectionPooler = &apiclient.ConnectionPooler{}
	b.VPCEndpoint = &apiclient.VPCEndpoint{VPCID: "v1"}
	b.Metadata = &apiclient.Metadata{Environment: apiclient.EnvironmentProd}
	expectKinds(t, d.observe(snapAt(1, false, b)), "service/a/status_changed", "service/a/ha_changed", "service/a/pooler_enabled",
		"service/a/vpc_attached", "service/a/environment_changed", "service/a/renamed")
	c := svc("a", "b", 1000, 4)
	c.Status = apiclient.ServiceUnstable
	c.HAReplicas = b.HAReplicas
	c.Metadata = b.Metadata
	expectKinds(t, d.observe(snapAt(2, false, c)), "service/a/pooler_disabled", "service/a/vpc_detached")
}

func rsSnap(m int, planned, needed int, rsFailed bool, sets ...fleet.ReplicaSet) *fleet.Snapshot {
	s := snapAt(m, false, svc("a", "a", 1000, 4))
	at := s.Taken
	s.ReplicaSets = sets
	h := fleet.PartHealth{Name: fleet.PartReplicaSets, Success: !rsFailed, LastSuccess: at.Add(time.Second)}
	if rsFailed {
		h.LastSuccess = t0
	}
	s.Parts = append(s.Parts, h)
	s.Budget = fleet.Budget{Planned: planned, Needed: needed}
	return s
}

func rs(id string, nodes int64) fleet.ReplicaSet {
	return fleet.ReplicaSet{ServiceID: "a", ReplicaSet: &apiclient.ReplicaSet{ID: id, Name: id, Status: "active", Nodes: apiclient.Int(nodes)}}
}

func TestChildrenOnlyFromWholeCycles(t *testing.T) {
	d := newDiffer("p1")
	d.observe(rsSnap(0, 10, 10, false, rs("r1", 1)))
	// A round-robin cycle (the budget did not cover every parent) or a failed
	// one: no created, no deleted.
	expectKinds(t, d.observe(rsSnap(1, 5, 10, false)))
	expectKinds(t, d.observe(rsSnap(2, 5, 10, false, rs("r1", 1), rs("r2", 1))))
	expectKinds(t, d.observe(rsSnap(3, 10, 10, true)))
	expectKinds(t, d.observe(rsSnap(4, 10, 10, true)))
	// A value read is a value read, round-robin or not.
	expectKinds(t, d.observe(rsSnap(5, 5, 10, false, rs("r1", 2), rs("r2", 1))), "replica_set/r1/resized")
	expectKinds(t, d.observe(rsSnap(6, 10, 10, false, rs("r1", 2), rs("r2", 1))), "replica_set/r2/created")
	expectKinds(t, d.observe(rsSnap(7, 10, 10, false, rs("r2", 1))))
	got := d.observe(rsSnap(8, 10, 10, false, rs("r2", 1)))
	expectKinds(t, got, "replica_set/r1/deleted")
	if got[0].ParentID != "a" {
		t.Errorf("parent_id %q", got[0].ParentID)
	}
}

func TestAPIKeyRotated(t *testing.T) {
	d := newDiffer("p1")
	s := snapAt(0, false)
	s.Auth = &apiclient.AuthInfo{APIKey: &apiclient.APIKeyInfo{PublicKey: "AAAAAAAAAAAAAAAAAAAAAAAA", Name: "k1"}}
	expectKinds(t, d.observe(s))
	s2 := snapAt(1, false)
	s2.Auth = &apiclient.AuthInfo{APIKey: &apiclient.APIKeyInfo{PublicKey: "AAAAAAAAAAAAAAAAAAAAAAAA", Name: "k1"}}
	expectKinds(t, d.observe(s2))
	s3 := snapAt(2, false)
	s3.Auth = &apiclient.AuthInfo{APIKey: &apiclient.APIKeyInfo{PublicKey: "BBBBBBBBBBBBBBBBBBBBBBBB", Name: "k2"}}
	got := d.observe(s3)
	expectKinds(t, got, "api_key/api_key/rotated")
	for _, f := range []Fields{got[0].Before, got[0].After} {
		for _, v := range f {
			if s, ok := v.(string); ok && (s == "AAAAAAAAAAAAAAAAAAAAAAAA" || s == "BBBBBBBBBBBBBBBBBBBBBBBB") {
				t.Errorf("the key is in the event: %v", f)
			}
		}
	}
}

func TestPeeringStatusCarriesTheError(t *testing.T) {
	d := newDiffer("p1")
	mk := func(m int, status string, msg *string) *fleet.Snapshot {
		s := snapAt(m, false)
		s.Peerings = []fleet.Peering{{VPCID: "v", Peering: &apiclient.Peering{ID: "pe", Status: status, ErrorMessage: msg}}}
		s.Parts = append(s.Parts, fleet.PartHealth{Name: fleet.PartVPCs, Success: true, LastSuccess: s.Taken},
			fleet.PartHealth{Name: fleet.PartPeerings, Success: true, LastSuccess: s.Taken})
		return s
	}
	d.observe(mk(0, "active", nil))
	msg := "route conflict"
	got := d.observe(mk(1, "error", &msg))
	expectKinds(t, got, "peering/pe/status_changed")
	if got[0].After["error_message"] != msg {
		t.Errorf("after %v", got[0].After)
	}
}

func TestUnchangedFleetAllocatesNothing(t *testing.T) {
	d := newDiffer("p1")
	s := fleetSnapshot(1000, 0)
	d.observe(s)
	m := 1
	allocs := testing.AllocsPerRun(20, func() {
		m++
		d.observe(nextUnchanged(s, m))
	})
	if allocs > 1 { // nextUnchanged's snapshot itself
		t.Errorf("%v allocations a snapshot, want none of the differ's", allocs)
	}
}

func TestVPCRenamed(t *testing.T) {
	d := newDiffer("p1")
	mk := func(m int, name string) *fleet.Snapshot {
		s := snapAt(m, false)
		s.VPCs = []apiclient.VPC{{ID: "v", Name: name}}
		s.Parts = append(s.Parts, fleet.PartHealth{Name: fleet.PartVPCs, Success: true, LastSuccess: s.Taken})
		return s
	}
	d.observe(mk(0, "a"))
	expectKinds(t, d.observe(mk(1, "b")), "vpc/v/renamed")
}
