package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestDiscoveryOutageIsNoConfigError: in project discovery mode, GET
// /projects failing is the discovery's failure, with its own series
// (clouddb_exporter_discovery_success 0), not a refused configuration
// (clouddb_exporter_config_last_reload_successful stays 1, so
// CloudDBConfigReloadFailed does not blame a --config.file there is none
// of). The log says so once and once more when it recovers, rather than
// "Configuration applied" every cycle.
func TestDiscoveryOutageIsNoConfigError(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	env := []string{"CLOUDDB_API_URL=" + sim.URL + "/v1", "CLOUDDB_ACCESS_KEY=" + testbin.SimAccessKey, "CLOUDDB_SECRET_KEY=" + testbin.SimSecretKey}
	p, url := startExporter(t, env, "--collect.interval=1s", "--collect.transition-interval=1s", "--api.max-retries=0")
	testbin.WaitFor(t, time.Minute, "a successful discovery", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_discovery_success", 1))

	sim.Fault(t, `{"operation":"listProjects","status":500}`)
	testbin.WaitFor(t, time.Minute, "the discovery to report its failure", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_discovery_success", 0))
	waitCalls := func(what string, n int) {
		t.Helper()
		testbin.WaitFor(t, time.Minute, what, func() bool {
			return discoveryCalls(t, url) >= n
		})
	}
	failedAt := discoveryCalls(t, url)
	waitCalls("three more failed discoveries", failedAt+3)
	_, fams := testbin.Scrape(t, url)
	if v, _ := testbin.Value(fams, "clouddb_exporter_config_last_reload_successful"); v != 1 {
		t.Errorf("clouddb_exporter_config_last_reload_successful = %v while GET /projects fails, want 1: no configuration was refused", v)
	}
	if v, ok := testbin.Value(fams, "clouddb_exporter_discovery_last_success_timestamp_seconds"); !ok || v <= 0 {
		t.Errorf("clouddb_exporter_discovery_last_success_timestamp_seconds = %v (%v), want the first discovery's time", v, ok)
	}

	sim.ClearFaults(t)
	testbin.WaitFor(t, time.Minute, "the discovery to recover", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_discovery_success", 1))
	waitCalls("three more discoveries", discoveryCalls(t, url)+3)
	out := p.Output()
	for line, want := range map[string]int{
		`Configuration applied`:       1,
		`Configuration not applied`:   0,
		`Project discovery failed`:    1,
		`Project discovery recovered`: 1,
		`Projects discovered`:         1,
	} {
		if n := strings.Count(out, line); n != want {
			t.Errorf("%d log lines %q, want %d:\n%s", n, line, want, out)
		}
	}
	// An outage of the discovery removes no project from the change feed.
	if got := kindCounts(feedOf(t, url)); got["project/removed"] != 0 || got["project/added"] != 0 {
		t.Errorf("the change feed after a discovery outage: %v, want no project removed or added", got)
	}
}

// discoveryCalls counts the project discovery's GET /projects, whatever
// their answer.
func discoveryCalls(t *testing.T, url string) int {
	t.Helper()
	_, fams := testbin.Scrape(t, url)
	n := 0.0
	for _, m := range fams["clouddb_exporter_api_requests_total"].GetMetric() {
		op, project := "", false
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "operation":
				op = l.GetValue()
			case "project_id":
				project = l.GetValue() != ""
			}
		}
		if op == "listProjects" && !project {
			n += m.GetCounter().GetValue()
		}
	}
	return int(n)
}
