package dataplane

import (
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestUsageTransientNotFound: a 404 on every usage read of a project (the
// preview endpoints down for a few minutes) fails the part with one WARN
// and keeps the last values; it does not hide the services' series for an
// hour: they are read again at the first tick after the 404s stop.
func TestUsageTransientNotFound(t *testing.T) {
	h := newUsageHarness(t, 3, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	now := h.clock.Now().Truncate(time.Minute)
	h.fu.series["x_database_qps"] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{point(now, f64(95))}}}
	if u := h.tick(); len(u.Samples()) != 3 {
		t.Fatalf("samples %+v, want 3", u.Samples())
	}
	h.fu.fail[apiclient.OpGetServiceMetricsAvailableSeries] = errNotFound
	h.fu.fail[apiclient.OpGetServiceMetricsSeries] = errNotFound
	for i := range 2 {
		h.clock.Advance(5 * time.Minute)
		u := h.tick()
		if hl := h.health(); hl.Success {
			t.Errorf("tick %d of 404s: the usage part reports success", i)
		}
		if len(u.Samples()) != 3 {
			t.Errorf("tick %d of 404s: %d samples, want the last 3 kept", i, len(u.Samples()))
		}
	}
	if n := strings.Count(h.logs.String(), "level=WARN"); n != 1 || !strings.Contains(h.logs.String(), "404") {
		t.Errorf("%d WARN lines for the 404s, want 1 naming them:\n%s", n, h.logs)
	}
	delete(h.fu.fail, apiclient.OpGetServiceMetricsAvailableSeries)
	delete(h.fu.fail, apiclient.OpGetServiceMetricsSeries)
	h.clock.Advance(5 * time.Minute)
	asked := len(h.fu.asked)
	h.fu.series["x_database_qps"][0].Data[0].Value = apiclient.NullableFloat{Value: 50, Valid: true}
	u := h.tick()
	if len(h.fu.asked)-asked != 3 {
		t.Errorf("%d series reads at the first tick after the 404s, want 3", len(h.fu.asked)-asked)
	}
	if len(u.Samples()) != 3 || u.Samples()[0].Value != 50 || !h.health().Success {
		t.Errorf("after the 404s: samples %+v, health %+v", u.Samples(), h.health())
	}
}

// TestUsageUnsupported: an API without the usage paths (404 on every read)
// is declared without usage series once every read has answered 404 for
// unsupportedAfter ticks in a row, with one log line; until then each tick
// reads and fails. Then it is asked again hourly, not each tick.
func TestUsageUnsupported(t *testing.T) {
	h := newUsageHarness(t, 3, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	h.fu.fail[apiclient.OpGetServiceMetricsAvailableSeries] = errNotFound
	reads := func() int { return h.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries] }
	for i := range unsupportedAfter - 1 {
		h.tick()
		if reads() != 3*(i+1) || h.health().Success || strings.Contains(h.logs.String(), "no usage series") {
			t.Fatalf("tick %d of 404s: %d reads, health %+v, logs:\n%s", i, reads(), h.health(), h.logs)
		}
		h.clock.Advance(5 * time.Minute)
	}
	h.tick()
	declared := reads()
	if declared != 3*unsupportedAfter || !h.health().Success || !strings.Contains(h.logs.String(), "no usage series") {
		t.Fatalf("after %d ticks of 404s: %d reads, health %+v, logs:\n%s", unsupportedAfter, declared, h.health(), h.logs)
	}
	for range 11 {
		h.clock.Advance(5 * time.Minute)
		h.tick()
	}
	if reads() != declared || len(h.fu.asked) != 0 {
		t.Errorf("%d available-series reads (%d when declared) and %d series reads within the hour", reads(), declared, len(h.fu.asked))
	}
	h.clock.Advance(5 * time.Minute)
	h.tick()
	if reads() != declared+3 {
		t.Errorf("%d available-series reads after an hour, want %d", reads(), declared+3)
	}
	if n := strings.Count(h.logs.String(), "no usage series"); n != 1 {
		t.Errorf("%d log lines, want 1:\n%s", n, h.logs)
	}
	// The paths appear: usage comes back.
	delete(h.fu.fail, apiclient.OpGetServiceMetricsAvailableSeries)
	h.clock.Advance(time.Hour)
	h.tick()
	if len(h.fu.asked) != 3 {
		t.Errorf("%d series reads once the API has the paths, want 3", len(h.fu.asked))
	}

	// A 404 for one service beside answers is that service's: the others
	// are read, and the part does not fail.
	h2 := newUsageHarness(t, 3, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	h2.fu.fail[apiclient.OpGetServiceMetricsAvailableSeries+"/svc01"] = errNotFound
	h2.u.opts.Concurrency = 1
	h2.tick()
	h2.clock.Advance(5 * time.Minute)
	h2.tick()
	if len(h2.fu.asked) < 2 || strings.Contains(h2.logs.String(), "no usage series") || !h2.health().Success {
		t.Errorf("one service's 404: reads %v, health %+v, logs:\n%s", h2.fu.asked, h2.health(), h2.logs)
	}
}

// TestUsageForbiddenIsOff: a plan without the usage endpoints may answer
// 403 rather than 404 on every usage read: the same three intervals turn
// usage off for the project, a success, so that the part is never stale.
func TestUsageForbiddenIsOff(t *testing.T) {
	h := newUsageHarness(t, 3, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	h.fu.fail[apiclient.OpGetServiceMetricsAvailableSeries] = &apiclient.APIError{StatusCode: 403, Code: "FORBIDDEN", Message: "not in your plan"}
	for i := range unsupportedAfter - 1 {
		h.tick()
		if h.health().Success {
			t.Fatalf("tick %d of 403s: the usage part reports success", i)
		}
		h.clock.Advance(5 * time.Minute)
	}
	h.tick()
	if !h.health().Success || !strings.Contains(h.logs.String(), "no usage series") {
		t.Errorf("after %d ticks of 403s: health %+v, logs:\n%s", unsupportedAfter, h.health(), h.logs)
	}
}
