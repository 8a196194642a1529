package e2e

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestDataPlaneStarvedPeriods: a rate limit the state's calls take whole
// (45 calls a full refresh, 7 a 4s interval at 2/s) leaves the data plane
// almost nothing; the usage refresh period and the log read period that
// CloudDBDataPlaneStarved reads are exported far above their intervals,
// whether or not any usage or log series was read yet.
func TestDataPlaneStarvedPeriods(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t, "--scenario=fleet", "--fleet.services=40", "--fleet.replica-sets-per-service=0", "--fleet.vpcs=2", "--fleet.peerings-per-vpc=1"))
	_, url := testbin.StartExporter(t, sim.Env(), "--api.rate-limit=2", "--collect.interval=4s", "--collect.min-data-interval=1s",
		"--collect.usage", "--collect.usage.interval=4s", "--collect.logs", "--collect.logs.interval=2s")
	periods := map[string]float64{
		"clouddb_exporter_usage_refresh_period_seconds": 4,
		"clouddb_exporter_log_read_period_seconds":      2,
	}
	testbin.WaitFor(t, 30*time.Second, "both data-plane periods", func() bool {
		fams := scrapeFams(t, url)
		for name := range periods {
			if _, ok := testbin.Value(fams, name, "project_id", testbin.SimProject); !ok {
				return false
			}
		}
		return true
	})
	fams := scrapeFams(t, url)
	for name, interval := range periods {
		// Far above, not merely above: the alert's thresholds are 4 and 10 intervals.
		v := value(t, fams, name, "project_id", testbin.SimProject)
		t.Logf("%s = %vs", name, v)
		if v <= 10*interval {
			t.Errorf("%s = %vs, want over 10 intervals of %vs: the state takes the budget", name, v, interval)
		}
	}
}

// TestDataPlaneHealthFromTheStart: the usage and log parts report their
// health (not succeeded yet: success 0, last success 0) from the start,
// while the state's first cycle keeps them from reading (here a services
// list answered after 10 s; a large fleet's first cycle on a starved
// budget takes up to an interval): before, they had no series at all for
// the first minutes, and CloudDBCollectorFailing and CloudDBDataStale
// could not see them.
func TestDataPlaneHealthFromTheStart(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t, "--scenario=fleet", "--fleet.services=40", "--fleet.replica-sets-per-service=0", "--fleet.vpcs=2", "--fleet.peerings-per-vpc=1"))
	sim.Fault(t, `{"operation":"listServices","latency":"10s","count":1}`)
	_, url := testbin.StartExporterServing(t, sim.Env(), "--api.rate-limit=2", "--collect.interval=20s", "--collect.min-data-interval=1s",
		"--collect.usage", "--collect.usage.interval=4s", "--collect.logs", "--collect.logs.interval=2s")
	parts := []string{"usage", "logs"}
	var fams map[string]*dto.MetricFamily
	testbin.WaitFor(t, 30*time.Second, "the data-plane parts' health", func() bool {
		fams = scrapeFams(t, url)
		for _, part := range parts {
			if _, ok := testbin.Value(fams, "clouddb_exporter_collector_success", "project_id", testbin.SimProject, "collector", part); !ok {
				return false
			}
		}
		return true
	})
	for _, part := range parts {
		for _, name := range []string{"clouddb_exporter_collector_success", "clouddb_exporter_collector_last_success_timestamp_seconds"} {
			if v := value(t, fams, name, "project_id", testbin.SimProject, "collector", part); v != 0 {
				t.Errorf("%s{collector=%q} = %v before the first read, want 0", name, part, v)
			}
		}
	}
	// Before any read: the periods come with the first read, after the
	// state's first cycle.
	if _, ok := testbin.Value(fams, "clouddb_exporter_log_read_period_seconds", "project_id", testbin.SimProject); ok {
		t.Errorf("the log read period is published already: the health came no earlier than the first read")
	}
}
