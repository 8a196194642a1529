package e2e

import (
	"testing"
	"time"

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
