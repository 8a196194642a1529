package poller

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// same reports whether two lists share their backing array.
func same[T any](a, b []T) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// TestSnapshotSharesUnchangedLists: a cycle publishes many snapshots (after
// the lists, then every batch of children, then at the end); copying the
// whole fleet into each made the snapshots most of what a cycle allocates.
// A list whose part of the state did not change is shared with the last
// snapshot; one that changed is rebuilt, with the change.
func TestSnapshotSharesUnchangedLists(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 20, 5)
	h := newHarness(t, c)
	first := h.poller.Poll(context.Background())
	if len(first.Services) != 20 || len(first.ReplicaSets) != 20 || len(first.VPCs) != 5 || len(first.Peerings) != 5 {
		t.Fatalf("first snapshot: %d services, %d replica sets, %d VPCs, %d peerings", len(first.Services), len(first.ReplicaSets), len(first.VPCs), len(first.Peerings))
	}

	// Nothing changed: every list is shared.
	second := h.poller.Poll(context.Background())
	if second == first {
		t.Fatal("a cycle published no new snapshot")
	}
	if !same(first.Services, second.Services) || !same(first.ReplicaSets, second.ReplicaSets) ||
		!same(first.VPCs, second.VPCs) || !same(first.Peerings, second.Peerings) {
		t.Error("an unchanged fleet's lists were copied again")
	}

	// One replica set changes: only the replica sets are rebuilt.
	c.set(func(f *fakeClient) { f.replicaSets["svc03"][0].Nodes = 3 })
	third := h.poller.Poll(context.Background())
	if same(second.ReplicaSets, third.ReplicaSets) {
		t.Fatal("the changed replica sets were shared with the last snapshot")
	}
	if got := third.ReplicaSets[3]; got.ServiceID != "svc03" || got.Nodes != 3 {
		t.Errorf("replica set 3 = %s nodes %d, want svc03 with 3 nodes", got.ServiceID, got.Nodes)
	}
	if second.ReplicaSets[3].Nodes != 1 {
		t.Error("the published snapshot was modified")
	}
	if !same(second.Services, third.Services) || !same(second.VPCs, third.VPCs) || !same(second.Peerings, third.Peerings) {
		t.Error("lists that did not change were copied again")
	}

	// A service goes: the services and replica sets are rebuilt.
	c.set(func(f *fakeClient) { f.services = f.services[1:] })
	fourth := h.poller.Poll(context.Background())
	if len(fourth.Services) != 19 || len(fourth.ReplicaSets) != 19 || fourth.Services[0].ServiceID != "svc01" {
		t.Errorf("after svc00 went: %d services (first %s), %d replica sets", len(fourth.Services), fourth.Services[0].ServiceID, len(fourth.ReplicaSets))
	}
	if len(third.Services) != 20 {
		t.Error("the published snapshot was modified")
	}
}

// TestRebuiltListPointsAtKeptValues: a list rebuilt because one entry
// changed holds pointers to the values the state keeps, not copies of them
// (a service is 280 bytes, its entry 32): the unchanged entries are the
// very values of the last snapshot, the changed one is new, and neither
// snapshot is modified.
func TestRebuiltListPointsAtKeptValues(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 5, 2)
	h := newHarness(t, c)
	first := h.poller.Poll(context.Background())
	c.set(func(f *fakeClient) {
		f.services[2].Status = apiclient.ServiceUnstable
		f.replicaSets["svc02"][0].Nodes = 2
		f.peerings["vpc01"][0].Status = apiclient.PeeringPending
	})
	second := h.poller.Poll(context.Background())
	if same(first.Services, second.Services) || same(first.ReplicaSets, second.ReplicaSets) || same(first.Peerings, second.Peerings) {
		t.Fatal("the changed lists were shared with the last snapshot")
	}
	for i := range second.Services {
		if kept := first.Services[i].Service == second.Services[i].Service; kept != (i != 2) {
			t.Errorf("service %d: the last snapshot's value kept %v, want %v", i, kept, i != 2)
		}
		if kept := first.ReplicaSets[i].ReplicaSet == second.ReplicaSets[i].ReplicaSet; kept != (i != 2) {
			t.Errorf("replica set %d: the last snapshot's value kept %v, want %v", i, kept, i != 2)
		}
	}
	if first.Peerings[0].Peering != second.Peerings[0].Peering || first.Peerings[1].Peering == second.Peerings[1].Peering {
		t.Error("peerings: want vpc00's kept and vpc01's new")
	}
	if first.Services[2].Status != apiclient.ServiceReady || first.ReplicaSets[2].Nodes != 1 || first.Peerings[1].Status != apiclient.PeeringActive {
		t.Error("the published snapshot was modified")
	}
	if second.Services[2].Status != apiclient.ServiceUnstable || second.ReplicaSets[2].Nodes != 2 || second.Peerings[1].Status != apiclient.PeeringPending {
		t.Error("the new snapshot lacks the changes")
	}
}

// TestUnchangedSnapshotAllocatesLittle: with nothing changed, a snapshot
// costs the same few allocations whatever the size of the fleet.
func TestUnchangedSnapshotAllocatesLittle(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	allocs := map[int]float64{}
	for _, n := range []int{10, 1000} {
		st := newState(slog.New(slog.DiscardHandler), func(string) bool { return true })
		for i := range n {
			id := fmt.Sprintf("s%04d", i)
			st.putService(&apiclient.Service{ServiceID: id, Status: apiclient.ServiceReady}, now)
			st.replicaSets().set(st, id, []apiclient.ReplicaSet{{ID: "rs-" + id}}, now)
		}
		st.snapshot("p", now, 0)
		allocs[n] = testing.AllocsPerRun(10, func() { st.snapshot("p", now, 0) })
	}
	if allocs[1000] > allocs[10] || allocs[1000] > 10 {
		t.Errorf("an unchanged snapshot allocates %v times at 1000 services, %v at 10: want the same few", allocs[1000], allocs[10])
	}
}
