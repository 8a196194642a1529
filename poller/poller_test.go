package poller

import (
	"context"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/internal/syncbuf"
)

type harness struct {
	client    *fakeClient
	clock     *fakeclock.Clock
	poller    *Poller
	logs      *syncbuf.Buffer
	published []*fleet.Snapshot
}

func newHarness(t *testing.T, client *fakeClient) *harness {
	t.Helper()
	h := &harness{client: client, clock: fakeclock.New(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)), logs: &syncbuf.Buffer{}}
	h.poller = New(client, Options{
		Collect: config.Collect{Interval: time.Minute, MaxStaleness: 5 * time.Minute, Concurrency: 3},
		Logger:  slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:     h.clock.Now,
		Publish: func(s *fleet.Snapshot) { h.published = append(h.published, s) },
	})
	return h
}

func part(t *testing.T, s *fleet.Snapshot, name string) fleet.PartHealth {
	t.Helper()
	for _, p := range s.Parts {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("part %s missing from %+v", name, s.Parts)
	return fleet.PartHealth{}
}

func ids[T any](list []T, id func(T) string) string {
	var out []string
	for _, v := range list {
		out = append(out, id(v))
	}
	return strings.Join(out, ",")
}

func serviceIDs(s *fleet.Snapshot) string {
	return ids(s.Services, func(v fleet.Service) string { return v.ServiceID })
}

func replicaSetIDs(s *fleet.Snapshot) string {
	return ids(s.ReplicaSets, func(v fleet.ReplicaSet) string { return v.ServiceID + "/" + v.ID })
}

func TestPollCallsTheMinimum(t *testing.T) {
	for _, withKey := range []bool{false, true} {
		c := newFakeClient()
		c.apiKey = withKey
		fleetOf(c, 7, 3)
		h := newHarness(t, c)
		snap := h.poller.Poll(context.Background())

		want := 2 + 7 + 3
		if withKey {
			want++
		}
		if got := c.total(); got != want {
			t.Errorf("apiKey=%v: %d API calls per cycle, want 2 + services + VPCs (+ auth) = %d (%v)", withKey, got, want, c.calls)
		}
		if len(snap.Services) != 7 || len(snap.ReplicaSets) != 7 || len(snap.VPCs) != 3 || len(snap.Peerings) != 3 {
			t.Errorf("snapshot incomplete: %d services, %d replica sets, %d VPCs, %d peerings",
				len(snap.Services), len(snap.ReplicaSets), len(snap.VPCs), len(snap.Peerings))
		}
		if (snap.Auth != nil) != withKey || (len(snap.Parts) == len(fleet.Parts)) != withKey {
			t.Errorf("apiKey=%v: auth=%v parts=%d", withKey, snap.Auth, len(snap.Parts))
		}
		for _, p := range snap.Parts {
			if !p.Success || !p.LastSuccess.Equal(h.clock.Now()) {
				t.Errorf("part %+v should have succeeded now", p)
			}
		}
		// Published after the lists, then at the end of the cycle.
		if len(h.published) != 2 || h.published[1] != snap || h.poller.Snapshot() != snap {
			t.Errorf("%d snapshots published, want the lists' and the cycle's", len(h.published))
		}
		if first := h.published[0]; len(first.Services) != 7 || len(first.ReplicaSets) != 0 || first.Seq >= snap.Seq {
			t.Errorf("first snapshot: %d services, %d replica sets, seq %d (last %d): want the services alone, first",
				len(first.Services), len(first.ReplicaSets), first.Seq, snap.Seq)
		}
		select {
		case <-h.poller.Ready():
		default:
			t.Error("not ready after the first cycle")
		}
	}
}

func TestPollPartialFailureKeepsThenDrops(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 3, 1)
	h := newHarness(t, c)
	h.poller.Poll(context.Background())

	// svc01's replica sets fail from now on; the others change and must be
	// seen fresh.
	c.set(func(f *fakeClient) {
		f.fail[apiclient.OpListReplicaSets+"/svc01"] = errBoom
		f.replicaSets["svc00"] = append(f.replicaSets["svc00"], apiclient.ReplicaSet{ID: "rs-new", Status: apiclient.ReplicaSetCreating})
	})
	h.clock.Advance(time.Minute)
	snap := h.poller.Poll(context.Background())
	if got, want := replicaSetIDs(snap), "svc00/rs-new,svc00/rs-svc00,svc01/rs-svc01,svc02/rs-svc02"; got != want {
		t.Errorf("replica sets %s, want %s (failed part kept, others fresh)", got, want)
	}
	rs := part(t, snap, fleet.PartReplicaSets)
	if rs.Success || !rs.LastSuccess.Equal(h.clock.Now().Add(-time.Minute)) {
		t.Errorf("replica_sets part %+v: want failure with the previous success time", rs)
	}
	if !part(t, snap, fleet.PartServices).Success {
		t.Error("services part must stay healthy")
	}
	if !strings.Contains(h.logs.String(), "Collector failed") || !strings.Contains(h.logs.String(), "service_id=svc01") {
		t.Errorf("failure not logged with the resource: %s", h.logs)
	}

	// Still failing past max-staleness: svc01's replica sets are dropped.
	h.clock.Advance(3*time.Minute + 30*time.Second) // 4m30s since the last good read
	if got := replicaSetIDs(h.poller.Poll(context.Background())); !strings.Contains(got, "svc01/") {
		t.Errorf("dropped before max-staleness: %s", got)
	}
	h.clock.Advance(time.Minute)
	if got := replicaSetIDs(h.poller.Poll(context.Background())); strings.Contains(got, "svc01/") || !strings.Contains(got, "svc02/") {
		t.Errorf("after max-staleness: %s, want svc01's dropped and the rest kept", got)
	}
}

func TestPollServicesFailureSkipsChildrenAndGoesStale(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 4, 2)
	h := newHarness(t, c)
	h.poller.Poll(context.Background())

	c.set(func(f *fakeClient) { f.fail[apiclient.OpListServices] = errBoom })
	c.resetCalls()
	h.clock.Advance(time.Minute)
	snap := h.poller.Poll(context.Background())
	if n := c.count(apiclient.OpListReplicaSets); n != 0 {
		t.Errorf("%d replica set calls while the services list fails: children must not add load to an outage", n)
	}
	if len(snap.Services) != 4 || len(snap.ReplicaSets) != 4 {
		t.Errorf("last good data not kept: %d services, %d replica sets", len(snap.Services), len(snap.ReplicaSets))
	}
	if part(t, snap, fleet.PartServices).Success || part(t, snap, fleet.PartReplicaSets).Success || !part(t, snap, fleet.PartVPCs).Success {
		t.Errorf("parts %+v: services and replica_sets failed, vpcs fine", snap.Parts)
	}
	h.clock.Advance(5 * time.Minute)
	snap = h.poller.Poll(context.Background())
	if len(snap.Services) != 0 || len(snap.ReplicaSets) != 0 || len(snap.VPCs) != 2 {
		t.Errorf("after max-staleness: %d services, %d replica sets, %d VPCs; want stale dropped, fresh kept",
			len(snap.Services), len(snap.ReplicaSets), len(snap.VPCs))
	}
}

// TestPollServicesListCutShort: the services list is applied as it is
// read, so an answer cut short part way keeps the services it carried, as
// read, and the others as last known; it removes none, and the part fails.
func TestPollServicesListCutShort(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 3, 1)
	h := newHarness(t, c)
	h.poller.Poll(context.Background())
	c.set(func(f *fakeClient) {
		for i := range f.services {
			f.services[i].Status = apiclient.ServiceUnstable
		}
		f.services = f.services[:2] // svc02 is gone, but the answer never gets there
		f.cutList = 1
	})
	snap := h.poller.Poll(context.Background())
	got := map[string]string{}
	for _, svc := range snap.Services {
		got[svc.ServiceID] = svc.Status
	}
	want := map[string]string{"svc00": apiclient.ServiceUnstable, "svc01": apiclient.ServiceReady, "svc02": apiclient.ServiceReady}
	if !maps.Equal(got, want) {
		t.Errorf("services after a list cut after one: %v, want %v", got, want)
	}
	if part(t, snap, fleet.PartServices).Success {
		t.Error("the services part succeeded on a list cut short")
	}
	c.set(func(f *fakeClient) { f.cutList = 0 })
	if got := serviceIDs(h.poller.Poll(context.Background())); got != "svc00,svc01" {
		t.Errorf("services after the whole list: %s, want svc02 removed", got)
	}
}

func TestPollDisappearedResources(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 3, 2)
	h := newHarness(t, c)
	h.poller.Poll(context.Background())
	c.set(func(f *fakeClient) {
		f.services = f.services[1:]
		f.vpcs = f.vpcs[:1]
	})
	snap := h.poller.Poll(context.Background())
	if got := serviceIDs(snap); got != "svc01,svc02" {
		t.Errorf("services %s", got)
	}
	if got := replicaSetIDs(snap); strings.Contains(got, "svc00") {
		t.Errorf("replica sets of a gone service kept: %s", got)
	}
	if len(snap.VPCs) != 1 || len(snap.Peerings) != 1 || snap.Peerings[0].VPCID != "vpc00" {
		t.Errorf("VPCs %v peerings %v", snap.VPCs, snap.Peerings)
	}
}

func TestStatusChangeEvents(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 1, 1)
	h := newHarness(t, c)
	first := h.poller.Poll(context.Background())
	start := h.clock.Now()

	h.clock.Advance(time.Minute)
	same := h.poller.Poll(context.Background())
	if !same.Services[0].StatusSince.Equal(start) {
		t.Errorf("StatusSince moved without a change: %v", same.Services[0].StatusSince)
	}

	msg := "peer rejected"
	c.set(func(f *fakeClient) {
		f.services[0].Status = apiclient.ServiceUnstable
		f.peerings["vpc00"][0].ErrorMessage = &msg
		f.replicaSets["svc00"][0].Status = apiclient.ReplicaSetError
	})
	h.clock.Advance(time.Minute)
	snap := h.poller.Poll(context.Background())
	if !snap.Services[0].StatusSince.Equal(h.clock.Now()) || !snap.ReplicaSets[0].StatusSince.Equal(h.clock.Now()) {
		t.Errorf("StatusSince not updated on change: %v %v", snap.Services[0].StatusSince, snap.ReplicaSets[0].StatusSince)
	}
	logs := h.logs.String()
	for _, want := range []string{
		`msg="Status changed" project_id=p1 service_id=svc00 old=READY new=UNSTABLE`,
		`replica_set_id=rs-svc00 old=active new=error`,
		`msg="Peering reports an error" project_id=p1 vpc_id=vpc00 peering_id=pr-vpc00 error_message="peer rejected"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if first.Services[0].Status != apiclient.ServiceReady {
		t.Error("a published snapshot was modified")
	}
}

func TestPollTransitionsFollowsOnlyTransitional(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 4, 2)
	c.services[1].Status = apiclient.ServiceConfiguring
	c.services[2].Status = apiclient.ServiceDeleting
	c.replicaSets["svc03"][0].Status = apiclient.ReplicaSetResizing
	c.peerings["vpc01"][0].Status = apiclient.PeeringPending
	h := newHarness(t, c)
	h.poller.Poll(context.Background())

	// svc01 settles, svc02 is gone, svc03's replica set settles, the
	// peering becomes active.
	c.set(func(f *fakeClient) {
		f.services[1].Status = apiclient.ServiceReady
		f.services = append(f.services[:2], f.services[3:]...)
		f.replicaSets["svc03"][0].Status = apiclient.ReplicaSetActive
		f.peerings["vpc01"][0].Status = apiclient.PeeringActive
	})
	c.resetCalls()
	before := len(h.published)
	h.poller.PollTransitions(context.Background())
	if got := c.calls; got[apiclient.OpGetService] != 2 || got[apiclient.OpListReplicaSets] != 1 || got[apiclient.OpGetPeering] != 1 || c.total() != 4 {
		t.Errorf("calls %v: want getService for the 2 transitional services, listReplicaSets for 1, getPeering for 1", got)
	}
	if len(h.published) != before+1 {
		t.Fatalf("published %d snapshots, want one", len(h.published)-before)
	}
	snap := h.poller.Snapshot()
	if got := serviceIDs(snap); got != "svc00,svc01,svc03" {
		t.Errorf("services %s: svc02 (404) must be gone", got)
	}
	for _, s := range snap.Services {
		if s.Status != apiclient.ServiceReady {
			t.Errorf("service %s still %s", s.ServiceID, s.Status)
		}
	}

	// Nothing transitional any more: no calls, no publication.
	c.resetCalls()
	h.poller.PollTransitions(context.Background())
	if c.total() != 0 || len(h.published) != before+1 {
		t.Errorf("settled fleet: %d calls, %d publications", c.total(), len(h.published)-before-1)
	}
}

func TestRefresh(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 1, 1)
	h := newHarness(t, c)
	h.poller.Poll(context.Background())

	c.set(func(f *fakeClient) {
		f.services = append(f.services, apiclient.Service{ServiceID: "new", Status: apiclient.ServiceQueued, InitialPassword: "s3cret"})
		f.vpcs[0].Name = "renamed"
		f.peerings["vpc00"] = append(f.peerings["vpc00"], apiclient.Peering{ID: "pr-new", Status: apiclient.PeeringPending})
	})
	ctx := context.Background()
	if err := h.poller.RefreshService(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	if err := h.poller.RefreshVPC(ctx, "vpc00"); err != nil {
		t.Fatal(err)
	}
	if err := h.poller.RefreshPeering(ctx, "vpc00", "pr-new"); err != nil {
		t.Fatal(err)
	}
	snap := h.poller.Snapshot()
	if got := serviceIDs(snap); got != "new,svc00" {
		t.Errorf("services %s", got)
	}
	if snap.Services[0].InitialPassword != "" {
		t.Error("initial_password kept in a snapshot")
	}
	if snap.VPCs[0].Name != "renamed" || len(snap.Peerings) != 2 {
		t.Errorf("VPC %+v peerings %+v", snap.VPCs[0], snap.Peerings)
	}
	c.set(func(f *fakeClient) { f.fail[apiclient.OpGetService] = errBoom })
	if err := h.poller.RefreshService(ctx, "svc00"); err == nil {
		t.Error("refresh error not returned")
	}
	if got := serviceIDs(h.poller.Snapshot()); got != "new,svc00" {
		t.Errorf("a failed refresh changed the snapshot: %s", got)
	}
}

func TestUniqueIDs(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 1, 1)
	c.services[0].Resources = []apiclient.Resource{{ID: "a"}, {ID: "b"}, {ID: "a", Spec: &apiclient.ResourceSpec{CPUMillis: new(apiclient.Int(2000))}}}
	c.replicaSets["svc00"] = append(c.replicaSets["svc00"], apiclient.ReplicaSet{ID: "rs-svc00", Status: apiclient.ReplicaSetError})
	c.peerings["vpc00"] = append(c.peerings["vpc00"], c.peerings["vpc00"][0])
	h := newHarness(t, c)
	snap := h.poller.Poll(context.Background())

	res := snap.Services[0].Resources
	if len(res) != 2 || res[0].ID != "a" || res[0].Spec != nil || res[1].ID != "b" {
		t.Errorf("resources %+v: want a (first copy), b", res)
	}
	if len(snap.ReplicaSets) != 1 || snap.ReplicaSets[0].Status != apiclient.ReplicaSetActive {
		t.Errorf("replica sets %+v: want one, the first copy", snap.ReplicaSets)
	}
	if len(snap.Peerings) != 1 {
		t.Errorf("peerings %+v: want one", snap.Peerings)
	}
	if n := strings.Count(h.logs.String(), "Duplicate ids in an API response"); n != 3 {
		t.Errorf("duplicates logged %d times, want once per list that has them (3):\n%s", n, h.logs)
	}
	if c.services[0].Resources[2].ID != "a" || len(c.services[0].Resources) != 3 {
		t.Error("the API's own slice was modified")
	}
}

// TestSnapshotReadStopsDuringAnOutage: a snapshot's Read is the end of the
// last call that succeeded: it advances with each successful cycle and
// stays put while every call fails, while Taken goes on advancing.
func TestSnapshotReadStopsDuringAnOutage(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 2, 1)
	h := newHarness(t, c)
	if snap := h.poller.Poll(context.Background()); !snap.Read.Equal(h.clock.Now()) {
		t.Fatalf("Read %v after a good cycle, want %v", snap.Read, h.clock.Now())
	}
	good := h.clock.Now()
	c.set(func(f *fakeClient) {
		for _, op := range []string{apiclient.OpListServices, apiclient.OpListVPCs, apiclient.OpListReplicaSets, apiclient.OpListPeerings, apiclient.OpGetAuthInfo} {
			f.fail[op] = errBoom
		}
	})
	for range 3 {
		h.clock.Advance(time.Minute)
		snap := h.poller.Poll(context.Background())
		if !snap.Read.Equal(good) || !snap.Taken.Equal(h.clock.Now()) {
			t.Fatalf("during the outage: Read %v, Taken %v; want Read %v (the last success) and Taken %v", snap.Read, snap.Taken, good, h.clock.Now())
		}
	}
	// One list answering is news from the API.
	c.set(func(f *fakeClient) { delete(f.fail, apiclient.OpListVPCs) })
	h.clock.Advance(time.Minute)
	if snap := h.poller.Poll(context.Background()); !snap.Read.Equal(h.clock.Now()) {
		t.Errorf("Read %v after the VPC list answered, want %v", snap.Read, h.clock.Now())
	}
	// A fresh poller has read nothing.
	if snap := newHarness(t, newFakeClient()).poller.publishNow(); !snap.Read.IsZero() {
		t.Errorf("Read %v before any call, want zero", snap.Read)
	}
}
