package apimetrics

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

var _ apiclient.Observer = (*apiObserver)(nil)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	a := m.Observer("proj-a")
	b := m.Observer("proj-b")

	// Pre-initialised: every operation's retries and the wait at 0.
	if n, err := testutil.GatherAndCount(reg, "clouddb_exporter_api_retries_total"); err != nil || n != 2*len(apiclient.Operations) {
		t.Errorf("clouddb_exporter_api_retries_total: %d series (err %v), want %d", n, err, 2*len(apiclient.Operations))
	}
	if n, _ := testutil.GatherAndCount(reg, "clouddb_exporter_api_requests_total", "clouddb_exporter_api_request_duration_seconds"); n != 0 {
		t.Errorf("%d request series before any request", n)
	}

	a.ObserveRequest(apiclient.OpListServices, "200", 40*time.Millisecond)
	a.ObserveRequest(apiclient.OpListServices, "200", 3*time.Second)
	a.ObserveRequest(apiclient.OpListServices, "error", 31*time.Second)
	a.ObserveRetry(apiclient.OpListServices)
	a.ObserveRateLimitWait(apiclient.OpListServices, 1500*time.Millisecond)
	a.ObserveRateLimitWait(apiclient.OpGetVPC, 500*time.Millisecond)
	b.ObserveRequest(apiclient.OpGetAuthInfo, "401", 10*time.Millisecond)

	want := `
# HELP clouddb_exporter_api_rate_limit_wait_seconds_total Time API requests waited for the client-side rate limit, in seconds.
# TYPE clouddb_exporter_api_rate_limit_wait_seconds_total counter
clouddb_exporter_api_rate_limit_wait_seconds_total{project_id="proj-a"} 2
clouddb_exporter_api_rate_limit_wait_seconds_total{project_id="proj-b"} 0
# HELP clouddb_exporter_api_requests_total HTTP requests sent to the cloud API, by operation and outcome.
# TYPE clouddb_exporter_api_requests_total counter
clouddb_exporter_api_requests_total{code="200",operation="listServices",project_id="proj-a"} 2
clouddb_exporter_api_requests_total{code="error",operation="listServices",project_id="proj-a"} 1
clouddb_exporter_api_requests_total{code="401",operation="getAuthInfo",project_id="proj-b"} 1
# HELP clouddb_exporter_api_request_duration_seconds Duration of HTTP attempts to the cloud API, in seconds.
# TYPE clouddb_exporter_api_request_duration_seconds histogram
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="0.05"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="0.1"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="0.25"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="0.5"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="1"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="2.5"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="5"} 2
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="10"} 2
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="30"} 2
clouddb_exporter_api_request_duration_seconds_bucket{operation="listServices",project_id="proj-a",le="+Inf"} 3
clouddb_exporter_api_request_duration_seconds_sum{operation="listServices",project_id="proj-a"} 34.04
clouddb_exporter_api_request_duration_seconds_count{operation="listServices",project_id="proj-a"} 3
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="0.05"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="0.1"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="0.25"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="0.5"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="1"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="2.5"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="5"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="10"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="30"} 1
clouddb_exporter_api_request_duration_seconds_bucket{operation="getAuthInfo",project_id="proj-b",le="+Inf"} 1
clouddb_exporter_api_request_duration_seconds_sum{operation="getAuthInfo",project_id="proj-b"} 0.01
clouddb_exporter_api_request_duration_seconds_count{operation="getAuthInfo",project_id="proj-b"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"clouddb_exporter_api_rate_limit_wait_seconds_total",
		"clouddb_exporter_api_requests_total",
		"clouddb_exporter_api_request_duration_seconds",
	); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.retries.WithLabelValues("proj-a", apiclient.OpListServices)); got != 1 {
		t.Errorf("clouddb_exporter_api_retries_total{proj-a,listServices} = %g, want 1", got)
	}

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	m.RemoveProject("proj-a")
	for _, name := range []string{
		"clouddb_exporter_api_rate_limit_wait_seconds_total", "clouddb_exporter_api_requests_total",
		"clouddb_exporter_api_request_duration_seconds", "clouddb_exporter_api_retries_total",
	} {
		out, err := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain, name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), `project_id="proj-a"`) {
			t.Errorf("%s keeps proj-a series after RemoveProject", name)
		}
	}
	if n, _ := testutil.GatherAndCount(reg, "clouddb_exporter_api_retries_total"); n != len(apiclient.Operations) {
		t.Errorf("proj-b: %d clouddb_exporter_api_retries_total series after removing proj-a, want %d", n, len(apiclient.Operations))
	}
}

// TestDiscoveryObserver: the project discovery's GET /projects calls are
// counted with an empty project_id (no label, to Prometheus), only their own retry series starts at 0,
// and removing a project leaves them.
func TestDiscoveryObserver(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	d := m.DiscoveryObserver()
	m.Observer("proj-a").ObserveRequest(apiclient.OpListServices, "200", 40*time.Millisecond)
	d.ObserveRequest(apiclient.OpListProjects, "401", 40*time.Millisecond)
	d.ObserveRetry(apiclient.OpListProjects)
	d.ObserveRequest(apiclient.OpListProjects, "200", 40*time.Millisecond)
	m.RemoveProject("proj-a")

	want := `
# HELP clouddb_exporter_api_rate_limit_wait_seconds_total Time API requests waited for the client-side rate limit, in seconds.
# TYPE clouddb_exporter_api_rate_limit_wait_seconds_total counter
clouddb_exporter_api_rate_limit_wait_seconds_total{project_id=""} 0
# HELP clouddb_exporter_api_requests_total HTTP requests sent to the cloud API, by operation and outcome.
# TYPE clouddb_exporter_api_requests_total counter
clouddb_exporter_api_requests_total{code="200",operation="listProjects",project_id=""} 1
clouddb_exporter_api_requests_total{code="401",operation="listProjects",project_id=""} 1
# HELP clouddb_exporter_api_retries_total Attempts to the cloud API that were retried.
# TYPE clouddb_exporter_api_retries_total counter
clouddb_exporter_api_retries_total{operation="listProjects",project_id=""} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"clouddb_exporter_api_rate_limit_wait_seconds_total",
		"clouddb_exporter_api_requests_total",
		"clouddb_exporter_api_retries_total",
	); err != nil {
		t.Error(err)
	}
	if n, _ := testutil.GatherAndCount(reg, "clouddb_exporter_api_decode_errors_total"); n != 0 {
		t.Errorf("%d clouddb_exporter_api_decode_errors_total series, want none before a decode error", n)
	}
}

func TestNewWithoutRegisterer(t *testing.T) {
	m := New(nil)
	m.Observer("p").ObserveRetry(apiclient.OpGetVPC)
	if got := testutil.ToFloat64(m.retries.WithLabelValues("p", apiclient.OpGetVPC)); got != 1 {
		t.Errorf("retries = %g, want 1", got)
	}
}

func TestPollObserver(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	o := m.PollObserver("p1")
	names := []string{"clouddb_exporter_poll_cycle_duration_seconds", "clouddb_exporter_poll_children_refresh_period_seconds", "clouddb_exporter_poll_cycle_overruns_total"}
	if n, err := testutil.GatherAndCount(reg, names...); err != nil || n != 1 {
		t.Errorf("before a cycle: %d series (%v), want the overrun counter alone", n, err)
	}
	o.ObserveCycle(42*time.Second, 3*time.Minute, false)
	o.ObserveCycle(61*time.Second, 3*time.Minute, true)
	want := `
# HELP clouddb_exporter_poll_cycle_duration_seconds Duration of the last full poll cycle of a project, in seconds.
# TYPE clouddb_exporter_poll_cycle_duration_seconds gauge
clouddb_exporter_poll_cycle_duration_seconds{project_id="p1"} 61
# HELP clouddb_exporter_poll_cycle_overruns_total Poll cycles of a project that outran the poll interval.
# TYPE clouddb_exporter_poll_cycle_overruns_total counter
clouddb_exporter_poll_cycle_overruns_total{project_id="p1"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names[0], names[2]); err != nil {
		t.Error(err)
	}
	if v := testutil.ToFloat64(m.refreshPeriod.WithLabelValues("p1")); v != 180 {
		t.Errorf("refresh period %v, want 180", v)
	}
	m.RemoveProject("p1")
	if n, _ := testutil.GatherAndCount(reg, names...); n != 0 {
		t.Errorf("%d series after RemoveProject", n)
	}
}

// TestObserveRequestSeries: a call finds its request series without a lookup
// by labels and without allocating, and every code and every operation,
// in the catalog or not, still counts apart when calls race.
func TestObserveRequestSeries(t *testing.T) {
	m := New(nil)
	o := m.Observer("p")
	o.ObserveRequest(apiclient.OpGetServiceLogs, "200", time.Millisecond)
	if n := testing.AllocsPerRun(100, func() { o.ObserveRequest(apiclient.OpGetServiceLogs, "200", time.Millisecond) }); n != 0 {
		t.Errorf("ObserveRequest: %v allocations a call, want 0", n)
	}
	var wg sync.WaitGroup
	for _, code := range []string{"200", "error", "200", "decode_error"} {
		wg.Go(func() {
			for range 50 {
				o.ObserveRequest(apiclient.OpGetServiceLogs, code, time.Second)
				o.ObserveRequest("notAnOperation", code, time.Second)
			}
		})
	}
	wg.Wait()
	for _, op := range []string{apiclient.OpGetServiceLogs, "notAnOperation"} {
		want := map[string]float64{"200": 100, "error": 50, "decode_error": 50}
		if op == apiclient.OpGetServiceLogs {
			want["200"] += 102 // the first call, AllocsPerRun's 101
		}
		for code, n := range want {
			if got := testutil.ToFloat64(m.requests.WithLabelValues("p", op, code)); got != n {
				t.Errorf("requests{%s,%s} = %g, want %g", op, code, got, n)
			}
		}
	}
	if got := testutil.CollectAndCount(m.requests); got != 6 {
		t.Errorf("%d request series, want 6", got)
	}
	h := &dto.Metric{}
	if err := m.duration.WithLabelValues("p", apiclient.OpGetServiceLogs).(prometheus.Histogram).Write(h); err != nil {
		t.Fatal(err)
	}
	if got := h.GetHistogram().GetSampleCount(); got != 302 {
		t.Errorf("duration{%s}: %d observations, want 302", apiclient.OpGetServiceLogs, got)
	}
}
