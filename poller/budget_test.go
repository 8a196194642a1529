package poller

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

type cycle struct {
	duration, period time.Duration
	overrun          bool
}

type recordingCycles struct {
	cycles []cycle
	capped []string
}

func (r *recordingCycles) ObserveRetryAfterCapped(op string) { r.capped = append(r.capped, op) }

func (r *recordingCycles) ObserveCycle(duration, period time.Duration, overrun bool) {
	r.cycles = append(r.cycles, cycle{duration, period, overrun})
}

// TestPollCallBudget: 50 services and 2 VPCs at 1 request/s and a 30s
// interval: 27 calls per cycle, 2 for the lists, 25 for the children. The
// lists run every cycle; the children are spread round-robin over three
// cycles, transitional ones first, and the spread is logged once.
func TestPollCallBudget(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 50, 2)
	c.services[37].Status = apiclient.ServiceConfiguring
	h := newHarness(t, c)
	obs := &recordingCycles{}
	h.poller.opts.Interval, h.poller.opts.RateLimit, h.poller.opts.Observer = 30*time.Second, 1, obs

	seen := map[string]int{}
	for i := range 4 {
		c.resetCalls()
		snap := h.poller.Poll(context.Background())
		if n := c.count(apiclient.OpListServices) + c.count(apiclient.OpListVPCs); n != 2 {
			t.Fatalf("cycle %d: %d list calls, want 2", i, n)
		}
		if n := c.count(apiclient.OpListReplicaSets) + c.count(apiclient.OpListPeerings); n != 25 {
			t.Fatalf("cycle %d: %d child calls, want the budget of 25", i, n)
		}
		if i == 0 && !strings.Contains(replicaSetIDs(snap), "svc37/") {
			t.Error("the transitional service's replica sets were not asked for first")
		}
		for _, rs := range snap.ReplicaSets {
			seen[rs.ServiceID]++
		}
		if i == 2 && (len(seen) != 50 || len(snap.Peerings) != 2) {
			t.Errorf("after three cycles: replica sets of %d services, %d peerings; want all", len(seen), len(snap.Peerings))
		}
		h.clock.Advance(30 * time.Second)
	}
	if len(obs.cycles) != 4 || obs.cycles[0].period != 90*time.Second || obs.cycles[0].overrun {
		t.Errorf("cycles observed %+v, want a refresh period of 3 x 30s", obs.cycles)
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "The API call budget does not cover"); n != 1 {
		t.Errorf("budget warning logged %d times, want once:\n%s", n, logs)
	}
	for _, want := range []string{"calls_needed=54", "budget_per_interval=30", "refresh_period=1m30s", "--api.rate-limit to 2.0", "--collect.interval to 1m0s"} {
		if !strings.Contains(logs, want) {
			t.Errorf("budget warning lacks %q:\n%s", want, logs)
		}
	}

	// With a budget that fits, every child every cycle, and one line to
	// say so.
	h.poller.opts.RateLimit = 10
	c.resetCalls()
	h.poller.Poll(context.Background())
	if n := c.count(apiclient.OpListReplicaSets); n != 50 {
		t.Errorf("%d replica set calls with room for all 50", n)
	}
	if !strings.Contains(h.logs.String(), "covers every resource in one interval again") {
		t.Error("the return to a full refresh was not logged")
	}
}

// TestPollOutageKeepsLastKnown: at the default MaxStaleness, an outage of
// any length keeps every resource, flagged by the parts' health; a
// successful list that no longer has a resource removes it.
func TestPollOutageKeepsLastKnown(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 3, 2)
	h := newHarness(t, c)
	h.poller.opts.MaxStaleness = DefaultMaxStaleness
	h.poller.Poll(context.Background())

	c.set(func(f *fakeClient) {
		for _, op := range []string{apiclient.OpListServices, apiclient.OpListVPCs, apiclient.OpListReplicaSets, apiclient.OpListPeerings} {
			f.fail[op] = errBoom
		}
	})
	var snap *fleet.Snapshot
	for range 60 {
		h.clock.Advance(time.Minute)
		snap = h.poller.Poll(context.Background())
	}
	if len(snap.Services) != 3 || len(snap.ReplicaSets) != 3 || len(snap.VPCs) != 2 || len(snap.Peerings) != 2 {
		t.Fatalf("after an hour of outage: %d services, %d replica sets, %d VPCs, %d peerings; want all kept",
			len(snap.Services), len(snap.ReplicaSets), len(snap.VPCs), len(snap.Peerings))
	}
	for _, p := range snap.Parts {
		if p.Success || !p.LastSuccess.Equal(h.clock.Now().Add(-time.Hour)) {
			t.Errorf("part %+v: want a failure with the success of an hour ago", p)
		}
	}
	c.set(func(f *fakeClient) {
		clear(f.fail)
		f.services = f.services[1:]
	})
	h.clock.Advance(time.Minute)
	if got := serviceIDs(h.poller.Poll(context.Background())); got != "svc01,svc02" {
		t.Errorf("services %s after the outage, want the one gone from the list removed", got)
	}
}

// TestPollStalenessCountsFromFailedAttempts: with a MaxStaleness, a value
// only goes stale when refreshing it fails; one that is merely old because
// the budget has not reached it yet stays.
func TestPollStalenessCountsFromFailedAttempts(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 4, 0)
	h := newHarness(t, c)
	// Two children per cycle: each is refreshed every other cycle.
	h.poller.opts.Interval, h.poller.opts.RateLimit, h.poller.opts.MaxStaleness = 10*time.Second, 0.5, 15*time.Second
	for range 2 {
		h.poller.Poll(context.Background())
		h.clock.Advance(10 * time.Second)
	}
	for range 4 {
		snap := h.poller.Poll(context.Background())
		if len(snap.ReplicaSets) != 4 {
			t.Fatalf("replica sets %s: one read 20s ago, not yet due again, was dropped", replicaSetIDs(snap))
		}
		h.clock.Advance(10 * time.Second)
	}
	c.set(func(f *fakeClient) { f.fail[apiclient.OpListReplicaSets+"/svc00"] = errBoom })
	var snap *fleet.Snapshot
	for range 6 {
		snap = h.poller.Poll(context.Background())
		h.clock.Advance(10 * time.Second)
	}
	if got := replicaSetIDs(snap); got != "svc01/rs-svc01,svc02/rs-svc02,svc03/rs-svc03" {
		t.Errorf("replica sets %s: want svc00's dropped after failing past MaxStaleness, the others kept", got)
	}
}

// TestPollRetryAfterDefers: a call the API answered with a Retry-After
// fails for this cycle, is logged once, and is not made again before the
// time asked; the rest of the cycle goes on.
func TestPollRetryAfterDefers(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 3, 1)
	h := newHarness(t, c)
	c.set(func(f *fakeClient) {
		f.fail[apiclient.OpListReplicaSets+"/svc01"] = &apiclient.APIError{StatusCode: 429, Code: "RATE_LIMITED", RetryAfter: 4 * time.Minute}
	})
	snap := h.poller.Poll(context.Background())
	if got := replicaSetIDs(snap); got != "svc00/rs-svc00,svc02/rs-svc02" || part(t, snap, fleet.PartReplicaSets).Success {
		t.Errorf("replica sets %s, part %+v: want the others read and the part failed", got, part(t, snap, fleet.PartReplicaSets))
	}
	c.set(func(f *fakeClient) { clear(f.fail) })
	for range 3 {
		h.clock.Advance(time.Minute)
		c.resetCalls()
		h.poller.Poll(context.Background())
		if n := c.count(apiclient.OpListReplicaSets); n != 2 {
			t.Fatalf("%d replica set calls within the Retry-After, want 2 (svc01 deferred)", n)
		}
	}
	if n := strings.Count(h.logs.String(), "Retry-After"); n != 1 {
		t.Errorf("Retry-After logged %d times, want once:\n%s", n, h.logs)
	}
	h.clock.Advance(time.Minute)
	snap = h.poller.Poll(context.Background())
	if got := replicaSetIDs(snap); !strings.Contains(got, "svc01/") || !part(t, snap, fleet.PartReplicaSets).Success {
		t.Errorf("replica sets %s after the Retry-After: want svc01's read again", got)
	}
}

// TestPublishOutsideTheLock: Publish runs without the poller's lock, in
// increasing Seq order, shared across pollers of one Sequence, and never
// after Close.
func TestPublishOutsideTheLock(t *testing.T) {
	var seq atomic.Uint64
	var last uint64
	var p *Poller
	c := newFakeClient()
	fleetOf(c, 2, 1)
	publish := func(s *fleet.Snapshot) {
		if !p.mu.TryLock() {
			t.Error("Publish runs with the poller's lock held")
		} else {
			p.mu.Unlock()
		}
		if s.Seq <= last {
			t.Errorf("snapshot %d published after %d", s.Seq, last)
		}
		last = s.Seq
	}
	p = New(c, Options{Publish: publish, Sequence: &seq})
	p.Poll(context.Background())
	if err := p.RefreshService(context.Background(), "svc00"); err != nil {
		t.Fatal(err)
	}
	p.Close()
	before := last
	p.Poll(context.Background())
	if last != before {
		t.Error("a closed poller published")
	}
	// A successor continues the numbers.
	p = New(c, Options{Publish: publish, Sequence: &seq})
	p.Poll(context.Background())
	if last <= before {
		t.Errorf("successor's snapshot %d, want after %d", last, before)
	}
	// Stale snapshots are not handed on: a publisher that lost the race
	// to a newer snapshot is dropped.
	old := &fleet.Snapshot{ProjectID: "p1", Seq: 1}
	p.publish(old)
	if last == 1 {
		t.Error("an older snapshot was published after a newer one")
	}
}

// TestPollCycleDeadline: a call that never answers cannot stall a cycle:
// it fails at the cycle's deadline (one interval), the rest is published,
// and the overrun is reported.
func TestPollCycleDeadline(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 3, 1)
	c.hang["svc01"] = true
	h := newHarness(t, c)
	obs := &recordingCycles{}
	// The deadline is real time (context.WithTimeout): long enough for the
	// in-process answers on a loaded machine, as short as that allows.
	h.poller.opts.Interval, h.poller.opts.Observer = 2*time.Second, obs
	snap := h.poller.Poll(context.Background())
	if got := replicaSetIDs(snap); got != "svc00/rs-svc00,svc02/rs-svc02" {
		t.Errorf("replica sets %s: want the calls that answered", got)
	}
	if part(t, snap, fleet.PartReplicaSets).Success || !part(t, snap, fleet.PartServices).Success {
		t.Errorf("parts %+v: want replica_sets failed, services fine", snap.Parts)
	}
	if len(obs.cycles) != 1 || !obs.cycles[0].overrun {
		t.Errorf("cycles %+v: want one overrun", obs.cycles)
	}
	if !strings.Contains(h.logs.String(), "did not finish within its interval") {
		t.Errorf("overrun not logged:\n%s", h.logs)
	}
	select {
	case <-h.poller.Ready():
	default:
		t.Error("not ready after a cycle that hit its deadline")
	}
}

// TestPollTransitionsRespectRetryAfter: the transition follow-up does not
// make a call the API asked to defer either.
func TestPollTransitionsRespectRetryAfter(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 2, 0)
	c.services[0].Status = apiclient.ServiceConfiguring
	h := newHarness(t, c)
	h.poller.Poll(context.Background())
	c.set(func(f *fakeClient) {
		f.fail[apiclient.OpGetService] = &apiclient.APIError{StatusCode: 503, RetryAfter: time.Hour}
	})
	h.poller.PollTransitions(context.Background())
	c.resetCalls()
	for range 5 {
		h.clock.Advance(10 * time.Second)
		h.poller.PollTransitions(context.Background())
	}
	if n := c.count(apiclient.OpGetService); n != 0 {
		t.Errorf("%d getService calls within the Retry-After", n)
	}
	h.clock.Advance(time.Hour)
	h.poller.PollTransitions(context.Background())
	if n := c.count(apiclient.OpGetService); n != 1 {
		t.Errorf("%d getService calls after the Retry-After, want 1", n)
	}
}

// TestRetryAfterDeferralIsCapped: a Retry-After ten years ahead defers the
// call for 5 minutes or 5 poll intervals, whichever is longer (it deferred
// 15 minutes, 15 intervals at the defaults), and is counted.
func TestRetryAfterDeferralIsCapped(t *testing.T) {
	for _, tc := range []struct{ interval, want time.Duration }{
		{30 * time.Second, 5 * time.Minute},
		{time.Minute, 5 * time.Minute},
		{2 * time.Minute, 10 * time.Minute},
	} {
		t.Run(tc.interval.String(), func(t *testing.T) {
			if got := maxDeferral(tc.interval); got != tc.want {
				t.Fatalf("maxDeferral(%s) = %s, want %s", tc.interval, got, tc.want)
			}
			c := newFakeClient()
			fleetOf(c, 2, 1)
			h := newHarness(t, c)
			h.poller.opts.Interval = tc.interval
			obs := &recordingCycles{}
			h.poller.opts.Observer = obs
			c.set(func(f *fakeClient) {
				f.fail[apiclient.OpListServices] = &apiclient.APIError{StatusCode: 429, RetryAfter: 10 * 365 * 24 * time.Hour}
			})
			h.poller.Poll(context.Background())
			c.set(func(f *fakeClient) { clear(f.fail) })
			c.resetCalls()
			const step = 30 * time.Second
			for elapsed := step; elapsed < tc.want; elapsed += step {
				h.clock.Advance(step)
				h.poller.Poll(context.Background())
			}
			if n := c.count(apiclient.OpListServices); n != 0 {
				t.Fatalf("%d services lists within the deferral, want 0", n)
			}
			h.clock.Advance(step)
			snap := h.poller.Poll(context.Background())
			if n := c.count(apiclient.OpListServices); n != 1 || !part(t, snap, fleet.PartServices).Success {
				t.Errorf("%d services lists %s after the deferral, want 1 that succeeded", n, tc.want)
			}
			if got := strings.Join(obs.capped, ","); got != apiclient.OpListServices {
				t.Errorf("capped Retry-After observed for %q, want %s", got, apiclient.OpListServices)
			}
			if !strings.Contains(h.logs.String(), "max_deferral="+tc.want.String()) {
				t.Errorf("the cap is not logged:\n%s", h.logs)
			}
		})
	}
}

// TestClearDeferrals: a reload's ClearDeferrals has the deferred calls made
// again at the next cycle.
func TestClearDeferrals(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 2, 1)
	h := newHarness(t, c)
	c.set(func(f *fakeClient) {
		f.fail[apiclient.OpListVPCs] = &apiclient.APIError{StatusCode: 503, RetryAfter: 10 * time.Minute}
	})
	h.poller.Poll(context.Background())
	c.set(func(f *fakeClient) { clear(f.fail) })
	c.resetCalls()
	h.clock.Advance(time.Minute)
	h.poller.Poll(context.Background())
	if n := c.count(apiclient.OpListVPCs); n != 0 {
		t.Fatalf("%d VPC lists while deferred, want 0", n)
	}
	h.poller.ClearDeferrals()
	h.clock.Advance(time.Minute)
	snap := h.poller.Poll(context.Background())
	if n := c.count(apiclient.OpListVPCs); n != 1 || !part(t, snap, fleet.PartVPCs).Success {
		t.Errorf("%d VPC lists after ClearDeferrals, want 1 that succeeded", n)
	}
	if !strings.Contains(h.logs.String(), `msg="Retry-After deferrals cleared by a reload" project_id=p1 calls=1`) {
		t.Errorf("the clearing is not logged:\n%s", h.logs)
	}
}
