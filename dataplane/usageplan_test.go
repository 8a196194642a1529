package dataplane

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestUsageBudgetRoundRobin: 30 services x 3 series at 1 request/s and a
// 1-minute usage interval: 54 calls a usage interval, minus the state's,
// cannot cover 90 series and 30 available-series reads; the series are
// read round-robin, least recently asked first, and one WARN says so.
func TestUsageBudgetRoundRobin(t *testing.T) {
	h := newUsageHarness(t, 30, 1, usageSettings{Interval: time.Minute, Series: []string{"database_qps", "database_num_connections", "system_disk_usage_bytes"}},
		"x_database_qps", "x_database_num_connections", "x_system_disk_usage_bytes")
	budget := h.u.budget()
	state, _ := h.host.StateCalls()
	if want := max(54-state, 1); budget != want || state < 2 {
		t.Fatalf("budget = %d with %d state calls, want %d", budget, state, want)
	}
	seen := map[string]int{}
	for i := range 5 {
		before := len(h.fu.asked)
		avail := h.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries]
		h.tick()
		calls := len(h.fu.asked) - before + h.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries] - avail
		if calls > budget {
			t.Fatalf("tick %d made %d calls, budget %d", i, calls, budget)
		}
		for _, a := range h.fu.asked[before:] {
			seen[a]++
		}
		h.clock.Advance(time.Minute)
	}
	if len(seen) != 90 {
		t.Errorf("%d of 90 series read in 5 intervals", len(seen))
	}
	// Round-robin: no series is read twice more often than another.
	lo, hi := math.MaxInt, 0
	for _, n := range seen {
		lo, hi = min(lo, n), max(hi, n)
	}
	if hi-lo > 1 {
		t.Errorf("series were read between %d and %d times: not round-robin", lo, hi)
	}
	if n := strings.Count(h.logs.String(), "refreshed round-robin"); n != 1 {
		t.Errorf("%d round-robin warnings, want 1:\n%s", n, h.logs)
	}
	if u := usageOf(h.host.Snapshot()); u.RefreshPeriod <= time.Minute {
		t.Errorf("refresh period %s, want more than the interval", u.RefreshPeriod)
	}
}

// TestUsageBudgetWarningFirstTick: the round-robin WARN comes on the first
// tick, before any service's available series are known, with numbers that
// count the series reads to come (assumed available until read), not the
// available-series reads alone.
func TestUsageBudgetWarningFirstTick(t *testing.T) {
	h := newUsageHarness(t, 30, 1, usageSettings{Interval: time.Minute, Series: []string{"database_qps", "database_num_connections", "system_disk_usage_bytes"}},
		"x_database_qps", "x_database_num_connections", "x_system_disk_usage_bytes")
	budget := h.u.budget()
	h.tick()
	logs := h.logs.String()
	if n := strings.Count(logs, "refreshed round-robin"); n != 1 {
		t.Fatalf("%d round-robin warnings after the first tick, want 1:\n%s", n, logs)
	}
	// 30 available-series reads and 30 x 3 series reads.
	if !strings.Contains(logs, "calls_needed=120 ") {
		t.Errorf("the warning does not count the 120 calls one refresh needs:\n%s", logs)
	}
	cycles := (120 + budget - 1) / budget
	if u := usageOf(h.host.Snapshot()); u.RefreshPeriod != time.Duration(cycles)*time.Minute {
		t.Errorf("refresh period %s after the first tick, want %d intervals", u.RefreshPeriod, cycles)
	}
}

// TestUsageWaitsForState: the state's calls go first. While a full cycle
// or a transition poll is running, usage calls wait, so that the two do
// not share the rate limit's tokens.
func TestUsageWaitsForState(t *testing.T) {
	h := newUsageHarness(t, 2, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	if !h.u.pace(context.Background()) {
		t.Error("usage waits with no state cycle running")
	}
	h.host.enter()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if h.u.pace(ctx) {
		t.Error("usage could call during a state cycle")
	}
	// A usage call waiting for a cycle goes once it ends.
	done := make(chan bool)
	go func() { done <- h.u.pace(context.Background()) }()
	h.host.leave()
	select {
	case ok := <-done:
		if !ok {
			t.Error("pace failed after the cycle ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("usage still waits after the cycle ended")
	}
}

// TestUsageBudgetFix: the fix's rate covers the state and the usage at the
// budget's share; its usage interval holds every series at the current rate.
func TestUsageBudgetFix(t *testing.T) {
	h := newUsageHarness(t, 30, 1, usageSettings{Interval: time.Minute, Series: []string{"database_qps", "database_num_connections", "system_disk_usage_bytes"}},
		"x_database_qps", "x_database_num_connections", "x_system_disk_usage_bytes")
	_, needed := h.host.StateCalls()
	state := float64(needed)
	if state < 2 {
		t.Fatalf("state needs %v calls", state)
	}
	rate := (state/60 + 120.0/60) / 0.9
	// At 1/s, 0.9/s minus the state's is left: 120 calls need 3 minutes.
	want := fmt.Sprintf("raise --api.rate-limit to %.1f if the provider allows it, or --collect.usage.interval to 3m0s, or select fewer", rate)
	if got := h.u.budgetFix(120); !strings.HasPrefix(got, want) {
		t.Errorf("fix = %q, want it to start with %q", got, want)
	}
	// An interval of an hour or more is no fix: each read would read the
	// available series again, and the values would be hours old.
	if got := h.u.budgetFix(4000); strings.Contains(got, "--collect.usage.interval") {
		t.Errorf("fix = %q suggests an interval over an hour", got)
	}
	// A state that takes the whole budget leaves no interval to suggest.
	h.host.needed = 60
	if got := h.u.budgetFix(120); strings.Contains(got, "--collect.usage.interval") {
		t.Errorf("fix = %q suggests an interval though the state takes the whole rate", got)
	}
}
