package admin

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// TestUnauthenticatedRefusalsAggregated: a flood of unauthenticated
// requests from one client costs one full audit record and log line, then
// one summary per interval with the count; each is counted on the metric.
// Authenticated requests keep their full record. A full disk used to follow
// such a flood, and every valid write then failed closed.
func TestUnauthenticatedRefusalsAggregated(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	e := newEnv(t, withOptions(func(o *Options) { o.now = clock.Now }))
	const flood = 200
	for range flood {
		// No credentials: wrong tokens would get 429 after 10.
		if a := e.do("GET", "/api/v1/operations", "", "Authorization", ""); a.status != http.StatusUnauthorized {
			t.Fatalf("no token: %d %s", a.status, a.body)
		}
	}
	if a := e.do("GET", "/api/v1/operations", ""); a.status != http.StatusOK {
		t.Fatalf("right token: %d %s", a.status, a.body)
	}
	recs := auditLines(t, e.audit.String())
	if len(recs) != 2 || recs[0]["status"] != float64(http.StatusUnauthorized) || recs[1]["caller"] != callerToken {
		t.Fatalf("audit after %d refusals and one authenticated request: %d records, want the first refusal and the request:\n%s", flood, len(recs), e.audit.String())
	}
	if n := strings.Count(e.logs.String(), `msg="Admin request"`); n != 2 {
		t.Errorf("%d log lines for the records, want 2", n)
	}
	if v := testutil.ToFloat64(e.srv.metrics.unauthenticated); v != flood {
		t.Errorf("clouddb_exporter_admin_unauthenticated_requests_total = %v, want %d", v, flood)
	}

	e.srv.unauth.sweep(false)
	if n := strings.Count(e.audit.String(), "\n"); n != 2 {
		t.Errorf("a summary before the interval ended: %d records", n)
	}
	clock.Advance(unauthInterval)
	e.srv.unauth.sweep(false)
	recs = auditLines(t, e.audit.String())
	if len(recs) != 3 || recs[2]["event"] != eventUnauthenticated || recs[2]["count"] != float64(flood-1) ||
		recs[2]["client"] != "127.0.0.1" || recs[2]["statuses"].(map[string]any)["401"] != float64(flood-1) {
		t.Fatalf("after the interval: %d records, want a summary of the other %d refusals:\n%s", len(recs), flood-1, e.audit.String())
	}
	if !strings.Contains(e.logs.String(), `msg="Admin unauthenticated requests" component=admin client=127.0.0.1 count=199`) {
		t.Errorf("no summary log line:\n%s", e.logs.String())
	}
	// A new interval starts with a full record again.
	e.do("GET", "/api/v1/operations", "", "Authorization", "")
	if n := strings.Count(e.audit.String(), "\n"); n != 4 {
		t.Errorf("%d records after a refusal in a new interval, want 4", n)
	}
}
