package poller

import (
	"context"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// TestInlineReplicaSetsSaveCalls: when service answers carry
// read_replica_sets (revision 2026), a cycle makes no listReplicaSets call
// (2 + VPCs calls), replica sets in transition are followed with getService,
// and a bad inline value is dropped, not zero.
func TestInlineReplicaSetsSaveCalls(t *testing.T) {
	c := newFakeClient()
	c.inline = true
	fleetOf(c, 7, 3)
	h := newHarness(t, c)
	snap := h.poller.Poll(context.Background())
	if got, want := c.total(), 2+3; got != want || c.count(apiclient.OpListReplicaSets) != 0 {
		t.Errorf("%d calls per cycle (%v), want 2 + VPCs = %d and no listReplicaSets", got, c.calls, want)
	}
	if len(snap.ReplicaSets) != 7 {
		t.Fatalf("%d replica sets in the snapshot, want 7", len(snap.ReplicaSets))
	}
	for _, s := range snap.Services {
		if s.ReadReplicaSets != nil {
			t.Errorf("service %s keeps its replica sets twice", s.ServiceID)
		}
	}
	if !part(t, snap, fleet.PartReplicaSets).Success {
		t.Error("replica sets part failed")
	}

	// A replica set in transition: followed with getService, once.
	c.set(func(f *fakeClient) { f.replicaSets["svc03"][0].Status = apiclient.ReplicaSetResizing })
	h.poller.Poll(context.Background())
	c.set(func(f *fakeClient) { f.replicaSets["svc03"][0].Status = apiclient.ReplicaSetActive })
	c.resetCalls()
	h.poller.PollTransitions(context.Background())
	if got := c.calls; got[apiclient.OpGetService] != 1 || c.total() != 1 {
		t.Errorf("transition follow-up calls %v, want one getService", got)
	}
	for _, rs := range h.poller.Snapshot().ReplicaSets {
		if rs.Status != apiclient.ReplicaSetActive {
			t.Errorf("replica set %s still %s", rs.ID, rs.Status)
		}
	}

	// A service without the field falls back to listReplicaSets.
	c.set(func(f *fakeClient) { f.inline = false })
	c.resetCalls()
	h.poller.Poll(context.Background())
	if got := c.count(apiclient.OpListReplicaSets); got != 7 {
		t.Errorf("%d listReplicaSets without inline replica sets, want 7", got)
	}
}

func TestInlineReplicaSetDropsMove(t *testing.T) {
	svc := apiclient.Service{
		ServiceID:       "s",
		ReadReplicaSets: []apiclient.ReplicaSet{{ID: "a"}, {ID: "b"}},
		Dropped: []apiclient.FieldError{
			{Field: "read_replica_sets.1.cpu_millis", Err: "bad"}, {Field: "created", Err: "bad"},
		},
	}
	list := inlineReplicaSets(&svc)
	if len(list) != 2 || !list[1].FieldDropped("cpu_millis") || list[0].FieldDropped("cpu_millis") ||
		len(svc.Dropped) != 1 || svc.Dropped[0].Field != "created" || svc.ReadReplicaSets != nil {
		t.Errorf("list %+v, service drops %+v", list, svc.Dropped)
	}
}
