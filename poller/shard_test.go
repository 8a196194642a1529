package poller

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/shard"
)

// TestShardsSplitTheFleet polls one fleet with three sharded pollers: each
// lists the services and VPCs once, but fetches, follows and publishes only
// its own, and together they hold every resource exactly once.
func TestShardsSplitTheFleet(t *testing.T) {
	const services, vpcs, total = 60, 12, 3
	owner := map[string]int{} // resource id -> shard
	childCalls := 0
	for i := range total {
		c := newFakeClient()
		fleetOf(c, services, vpcs)
		sh := shard.Shard{Index: i, Total: total}
		p := New(c, Options{Collect: config.Collect{Interval: time.Minute, Concurrency: 3}, Shard: sh, Logger: slog.New(slog.DiscardHandler)})
		snap := p.Poll(context.Background())

		if got := c.count(apiclient.OpListServices) + c.count(apiclient.OpListVPCs); got != 2 {
			t.Errorf("shard %d: %d list calls, want 2: every shard reads the lists whole", i, got)
		}
		rs, pr := c.count(apiclient.OpListReplicaSets), c.count(apiclient.OpListPeerings)
		if rs != len(snap.Services) || pr != len(snap.VPCs) {
			t.Errorf("shard %d: %d listReplicaSets and %d listPeerings calls for %d services and %d VPCs: only its own", i, rs, pr, len(snap.Services), len(snap.VPCs))
		}
		if rs == 0 || rs == services {
			t.Errorf("shard %d fetched %d of %d services' replica sets: not a split", i, rs, services)
		}
		childCalls += rs + pr
		claim := func(kind, id string, owns string) {
			if !sh.Owns(owns) {
				t.Errorf("shard %d publishes %s %s, which it does not own", i, kind, id)
			}
			if prev, ok := owner[kind+"/"+id]; ok {
				t.Errorf("%s %s published by shards %d and %d", kind, id, prev, i)
			}
			owner[kind+"/"+id] = i
		}
		for _, s := range snap.Services {
			claim("service", s.ServiceID, s.ServiceID)
		}
		for _, r := range snap.ReplicaSets {
			claim("replica set", r.ID, r.ServiceID)
		}
		for _, v := range snap.VPCs {
			claim("vpc", v.ID, v.ID)
		}
		for _, pe := range snap.Peerings {
			claim("peering", pe.ID, pe.VPCID)
		}

		// A refresh asked for a service of another shard (an admin
		// operation sent to this shard) does not bring it in.
		for _, svc := range c.services {
			if sh.Owns(svc.ServiceID) {
				continue
			}
			if err := p.RefreshService(context.Background(), svc.ServiceID); err != nil {
				t.Fatal(err)
			}
			if err := p.RefreshReplicaSets(context.Background(), svc.ServiceID); err != nil {
				t.Fatal(err)
			}
			if s := p.Snapshot(); len(s.Services) != len(snap.Services) || len(s.ReplicaSets) != len(snap.ReplicaSets) {
				t.Errorf("shard %d: refreshing service %s of another shard added it", i, svc.ServiceID)
			}
			break
		}
	}
	if want := 2 * (services + vpcs); len(owner) != want {
		t.Errorf("the shards together publish %d resources, want %d", len(owner), want)
	}
	if childCalls != services+vpcs {
		t.Errorf("the shards together made %d per-resource calls, want %d (one per service and VPC)", childCalls, services+vpcs)
	}
}

// TestShardFollowsOnlyItsTransitions checks that the transition follow-up
// of a shard calls the API only for its own services.
func TestShardFollowsOnlyItsTransitions(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 30, 0)
	for i := range c.services {
		c.services[i].Status = apiclient.ServiceConfiguring
	}
	sh := shard.Shard{Index: 1, Total: 3}
	p := New(c, Options{Collect: config.Collect{Interval: time.Minute, Concurrency: 3}, Shard: sh, Logger: slog.New(slog.DiscardHandler)})
	snap := p.Poll(context.Background())
	c.resetCalls()
	p.PollTransitions(context.Background())
	if got := c.count(apiclient.OpGetService); got != len(snap.Services) || got == 0 || got == 30 {
		t.Errorf("%d getService calls to follow transitions, want one per service of the shard (%d of 30)", got, len(snap.Services))
	}
}
