package poller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestRoundRobinPastPermanentTransitions: on the fake clock, with parents in
// transition for the whole run, every per-parent list is still asked for
// within the refresh period the poller reports (and exports), in every
// window of that many cycles; a transitional list is asked for at least
// once per TransitionInterval when the budget has room beside the
// round-robin. Before, the transitional lists took every free call while
// they were at least as many as the budget, and the others were never read
// (the first revision's demo at a 1s interval and 5 requests/s: one call a
// cycle, the CONFIGURING service's and the pending peering's lists).
func TestRoundRobinPastPermanentTransitions(t *testing.T) {
	for _, tc := range []struct {
		name               string
		services, vpcs     int
		configuring        []int // services in a long CONFIGURING
		resizing           []int // services with a replica set resizing
		pendingVPCs        []int // VPCs with a pending peering
		apiKey             bool  // the auth info: a third list every cycle
		rateLimit          float64
		transitionInterval time.Duration
		// followed: the transitional lists must be asked for every
		// TransitionInterval (the budget leaves them room).
		followed bool
	}{
		{name: "demo: one call a cycle", services: 7, vpcs: 2, configuring: []int{5}, pendingVPCs: []int{0},
			apiKey: true, rateLimit: 5, transitionInterval: 10 * time.Second},
		{name: "more transitions than the budget, due every cycle", services: 12, vpcs: 1, configuring: []int{0, 4, 9},
			rateLimit: 5, transitionInterval: time.Second},
		{name: "room for the transitions", services: 20, vpcs: 2, configuring: []int{3}, resizing: []int{11}, pendingVPCs: []int{1},
			rateLimit: 10, transitionInterval: 10 * time.Second, followed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeClient()
			fleetOf(c, tc.services, tc.vpcs)
			c.apiKey = tc.apiKey
			transitional := map[string]bool{}
			for _, i := range tc.configuring {
				c.services[i].Status = apiclient.ServiceConfiguring
				transitional[apiclient.OpListReplicaSets+"/"+c.services[i].ServiceID] = true
			}
			for _, i := range tc.resizing {
				id := c.services[i].ServiceID
				c.replicaSets[id][0].Status = apiclient.ReplicaSetResizing
				transitional[apiclient.OpListReplicaSets+"/"+id] = true
			}
			for _, i := range tc.pendingVPCs {
				id := c.vpcs[i].ID
				c.peerings[id][0].Status = apiclient.PeeringPending
				transitional[apiclient.OpListPeerings+"/"+id] = true
			}
			var lists []string // "operation/parent"
			for _, svc := range c.services {
				lists = append(lists, apiclient.OpListReplicaSets+"/"+svc.ServiceID)
			}
			for _, v := range c.vpcs {
				lists = append(lists, apiclient.OpListPeerings+"/"+v.ID)
			}

			h := newHarness(t, c)
			obs := &recordingCycles{}
			const interval = time.Second
			h.poller.opts.Interval, h.poller.opts.RateLimit, h.poller.opts.Observer = interval, tc.rateLimit, obs
			h.poller.opts.TransitionInterval = tc.transitionInterval
			last := map[string]int{} // cycle of the last ask
			cycle := 0
			poll := func() {
				h.clock.Advance(interval)
				cycle++
				h.poller.Poll(context.Background())
				for _, l := range lists {
					op, id, _ := strings.Cut(l, "/")
					if c.countOf(op, id) > 0 {
						last[l] = cycle
					}
				}
				c.resetCalls()
			}
			// Until every list has been read once, the poller does not know
			// yet which are transitional (a pending peering, a resizing
			// replica set), nor therefore its period.
			for len(last) < len(lists) {
				if cycle == 100 {
					t.Fatalf("after %d cycles, lists never asked for: %d of %d asked for", cycle, len(last), len(lists))
				}
				poll()
			}
			period := obs.cycles[cycle-1].period
			k := int(period / interval)
			if k <= 1 {
				t.Fatalf("refresh period %s: the budget covers every list, the test proves nothing", period)
			}
			followEvery := int(tc.transitionInterval / interval)
			for end := cycle + 4*k + 2*followEvery; cycle < end; {
				poll()
				if got := obs.cycles[cycle-1].period; got != period {
					t.Fatalf("cycle %d: refresh period %s, was %s with the same fleet", cycle, got, period)
				}
				for _, l := range lists {
					if cycle-last[l] >= k {
						t.Fatalf("cycle %d: %s last asked for at cycle %d, not within the refresh period of %d cycles (%s)", cycle, l, last[l], k, period)
					}
					if tc.followed && transitional[l] && cycle-last[l] >= followEvery {
						t.Fatalf("cycle %d: transitional %s last asked for at cycle %d, not every %s", cycle, l, last[l], tc.transitionInterval)
					}
				}
			}
		})
	}
}
