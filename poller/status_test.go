package poller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// TestSnapshotKeepsLastErrorPerPart: a failed part carries its error's
// text, bounded, for the status page; a success clears it.
func TestSnapshotKeepsLastErrorPerPart(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 3, 1)
	long := &apiclient.APIError{StatusCode: 500, Code: "INTERNAL_ERROR", Message: strings.Repeat("x", 2000)}
	c.set(func(f *fakeClient) {
		f.fail[apiclient.OpListVPCs] = errBoom
		f.fail[apiclient.OpListReplicaSets+"/svc01"] = long
	})
	h := newHarness(t, c)
	snap := h.poller.Poll(context.Background())
	if got := part(t, snap, fleet.PartVPCs).LastError; !strings.Contains(got, "boom") {
		t.Errorf("vpcs part's last error %q, want the API's message", got)
	}
	if got := part(t, snap, fleet.PartReplicaSets).LastError; len(got) > maxErrorText+len("…") || !strings.HasPrefix(got, long.Error()[:50]) {
		t.Errorf("replica_sets part's last error is %d bytes (%.60q…), want at most %d", len(got), got, maxErrorText)
	}
	if got := part(t, snap, fleet.PartServices).LastError; got != "" {
		t.Errorf("services part succeeded with last error %q", got)
	}
	c.set(func(f *fakeClient) { clear(f.fail) })
	h.clock.Advance(time.Minute)
	if got := part(t, h.poller.Poll(context.Background()), fleet.PartVPCs).LastError; got != "" {
		t.Errorf("after a success the last error is %q, want none", got)
	}
}

// TestSnapshotCarriesBudget: the snapshot says how many calls a cycle
// needs and how many the rate limit allows (50 services and 2 VPCs at 1
// request/s every 30s: 54 needed, 30 allowed, refreshed over 3 cycles).
func TestSnapshotCarriesBudget(t *testing.T) {
	c := newFakeClient()
	fleetOf(c, 50, 2)
	h := newHarness(t, c)
	h.poller.opts.Interval, h.poller.opts.RateLimit = 30*time.Second, 1
	got := h.poller.Poll(context.Background()).Budget
	want := fleet.Budget{Needed: 54, Planned: 27, PerInterval: 30, RefreshPeriod: 90 * time.Second}
	if got != want {
		t.Errorf("budget %+v, want %+v", got, want)
	}
	h.poller.opts.RateLimit = 0
	h.clock.Advance(30 * time.Second)
	if got := h.poller.Poll(context.Background()).Budget; got.PerInterval != -1 || got.Needed != 54 || got.Planned != 54 {
		t.Errorf("without a rate limit: budget %+v, want 54 needed and planned, -1 allowed", got)
	}
}
