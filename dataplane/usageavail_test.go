package dataplane

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUsageAvailableSeriesStaggered: a service's available series are
// read at its first read, then about hourly at a second of the hour of
// its own, as the nodes' totals are: a fleet's fall due a twelfth of it
// each 5-minute interval, never all in one interval an hour after the
// start; each is read again between half an hour and an hour and a half
// after its first read, then an hour apart.
func TestUsageAvailableSeriesStaggered(t *testing.T) {
	const n = 600
	h := newUsageHarness(t, n, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	counted := &countedAvail{fakeUsage: h.fu, reads: map[string][]time.Duration{}, now: h.clock.Now, start: h.clock.Now()}
	h.u.client = counted
	h.tick()
	if got := counted.total; got != n {
		t.Fatalf("first tick: %d available-series reads, want %d (every service at once)", got, n)
	}
	perTick := make([]int, 0, 36)
	for range 36 {
		h.clock.Advance(5 * time.Minute)
		before := counted.total
		h.tick()
		perTick = append(perTick, counted.total-before)
	}
	t.Logf("%d services: available-series reads a tick over 3 hours after the first: %v", n, perTick)
	// A twelfth of the fleet a tick on average; twice that allows for the hash.
	if limit := 2 * n / 12; slices.Max(perTick) > limit {
		t.Errorf("up to %d available-series reads in one tick, want at most %d: not staggered (%v)", slices.Max(perTick), limit, perTick)
	}
	for i := range n {
		id := fmt.Sprintf("svc%02d", i)
		at := counted.reads[id]
		if len(at) < 3 || at[0] != 0 || at[1] < 30*time.Minute || at[1] > 90*time.Minute {
			t.Errorf("%s: available series read at %v, want at 0 and again between 30m and 1h30m", id, at)
			continue
		}
		for j := 2; j < len(at); j++ {
			if at[j]-at[j-1] != time.Hour {
				t.Errorf("%s: available series read at %v, want an hour apart after the first", id, at)
				break
			}
		}
	}
}

// TestUsageAvailableSeriesNeededSteady: the calls one refresh needs,
// which the budget's round-robin and its WARN go by, stay level across
// the hour after the start: with a budget that holds the series and a
// twelfth of the available-series reads but not all of them, the WARN of
// the first read is not followed by another an hour later.
func TestUsageAvailableSeriesNeededSteady(t *testing.T) {
	const n = 600
	// 3/s: 810 calls a usage interval, 800 after the state's 10.
	h := newUsageHarness(t, n, 3, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	if budget := h.u.budget(); budget != 800 {
		t.Fatalf("budget %d, want 800", budget)
	}
	h.tick()
	needed := make([]int, 0, 36)
	for range 36 {
		h.clock.Advance(5 * time.Minute)
		pl := h.u.plan(h.u.sel.selected(h.host.Snapshot()), h.clock.Now(), -1)
		needed = append(needed, pl.needed)
		h.tick()
	}
	t.Logf("%d services, 1 series: calls needed a tick over 3 hours after the first: %v", n, needed)
	if lo, hi := slices.Min(needed), slices.Max(needed); lo < n || hi > n+2*n/12 {
		t.Errorf("from %d to %d calls needed a tick, want %d to %d (the series and a twelfth of the available series, twice over)", lo, hi, n, n+2*n/12)
	}
	if w := strings.Count(h.logs.String(), "refreshed round-robin"); w != 1 {
		t.Errorf("%d round-robin warnings in 3 hours, want 1 (the first read's):\n%s", w, h.logs)
	}
}

// countedAvail records when each service's available series were read,
// after start.
type countedAvail struct {
	*fakeUsage
	reads map[string][]time.Duration
	total int
	now   func() time.Time
	start time.Time
}

func (c *countedAvail) GetServiceMetricsAvailableSeries(ctx context.Context, id string) ([]string, error) {
	c.mu.Lock()
	c.reads[id] = append(c.reads[id], c.now().Sub(c.start))
	c.total++
	c.mu.Unlock()
	return c.fakeUsage.GetServiceMetricsAvailableSeries(ctx, id)
}
