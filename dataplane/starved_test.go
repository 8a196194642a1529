package dataplane

import (
	"context"
	"sync"
	"testing"
	"time"
)

// starve makes the state take the whole budget at 5 requests/s: 300 calls
// a minute, over the 270 of the budget's share.
func starve(h *fakeHost) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.planned, h.needed = 300, 300
}

// onFirstAvail runs fn once, at the first available-series read.
type onFirstAvail struct {
	*fakeUsage
	fn func()
}

func (o *onFirstAvail) GetServiceMetricsAvailableSeries(ctx context.Context, id string) ([]string, error) {
	if o.fn != nil {
		o.fn()
		o.fn = nil
	}
	return o.fakeUsage.GetServiceMetricsAvailableSeries(ctx, id)
}

// TestStarvedUsagePeriodPublished: when the state takes the whole budget,
// the usage refresh period is far above the interval, and is published
// before the first read returns: the first read may take the whole interval.
func TestStarvedUsagePeriodPublished(t *testing.T) {
	h := newUsageHarness(t, 100, 5, usageSettings{Interval: 5 * time.Minute, Series: []string{"database_qps", "database_num_connections"}},
		"x_database_qps", "x_database_num_connections")
	starve(h.host)
	var before *Usage
	h.u.client = &onFirstAvail{fakeUsage: h.fu, fn: func() { before = usageOf(h.host.Snapshot()) }}
	after := h.tick()
	if before == nil {
		t.Fatal("no usage published before the first read")
	}
	for name, u := range map[string]*Usage{"before the first read": before, "after the first tick": after} {
		// 300 calls (100 available-series reads, 200 series) at one call a tick.
		if u.RefreshPeriod < 4*5*time.Minute {
			t.Errorf("%s: refresh period %s, want far more than the 5m interval", name, u.RefreshPeriod)
		}
	}
}

// TestStarvedLogsPeriodPublished: when the state takes the whole budget,
// the log reads get the share the state leaves to the rest (10% of 5/s):
// 100 services are read every 200s, not every minute, and the period is
// published before the first read returns, as it is at the normal period.
func TestStarvedLogsPeriodPublished(t *testing.T) {
	h := newLogsHarness(t, 100, 5)
	h.l.opts.RateLimit = 5
	starve(h.host)
	var before *Logs
	var first sync.Once // the reads run in parallel
	h.fl.onCall = func(string) {
		first.Do(func() { before = logsOf(h.host.Snapshot()) })
	}
	after := h.tick()
	if before == nil {
		t.Fatal("no logs published before the first read")
	}
	for name, l := range map[string]*Logs{"before the first read": before, "after the first tick": after} {
		if l.ReadPeriod != 200*time.Second {
			t.Errorf("%s: read period %s, want 3m20s", name, l.ReadPeriod)
		}
	}
	// A budget that suffices reads at the interval.
	h.l.opts.RateLimit = 1000
	if l := h.tick(); l.ReadPeriod != time.Minute {
		t.Errorf("read period %s with a budget that suffices, want the 1m interval", l.ReadPeriod)
	}
	// Without a budget too.
	h.l.opts.RateLimit = 0
	if l := h.tick(); l.ReadPeriod != time.Minute {
		t.Errorf("read period %s without a budget, want the 1m interval", l.ReadPeriod)
	}
}
