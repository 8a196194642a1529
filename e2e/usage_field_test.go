package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// The tests of this file run the usage collector against answers a real
// API may send and a demo does not: duplicated label sets, extra labels,
// throttling.

// TestUsageHostileSeriesAnswers: a series answer that repeats a label set
// with an extra label is exported once (a duplicate series would fail the
// whole scrape) and the exposition passes promtool; a throttled API (429
// with Retry-After) flags the part and recovers.
func TestUsageHostileSeriesAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	sim.Fault(t, `{"operation":"getServiceMetricsSeries","edit":{"index":0,"field":"labels.zone","value":"b","append":true}}`)
	_, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.usage.interval=1s", "--collect.usage.series=system_cpu_usage_millicores", "--no-rightsizing")...)
	testbin.WaitFor(t, 60*time.Second, "usage values", func() bool {
		_, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_system_cpu_usage_cores")
		return ok
	})
	_, body := testbin.Get(url + "/metrics")
	seen := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "clouddb_service_system_cpu_usage_cores{") && !strings.HasPrefix(line, "clouddb_service_usage_bucket_timestamp_seconds{") {
			continue
		}
		series, _, _ := strings.Cut(line, "} ")
		if seen[series] {
			t.Errorf("exported twice: %s", series)
		}
		seen[series] = true
	}
	if problems, err := promlint.New(strings.NewReader(body)).Lint(); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}

	// Throttled: the reads fail after the retries the Retry-After allows,
	// the values stay, and the part recovers once the API answers.
	sim.ClearFaults(t)
	sim.Fault(t, `{"operation":"getServiceMetricsSeries","status":429,"retry_after":"1"}`)
	testbin.WaitFor(t, 60*time.Second, "the throttled reads to be reported", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_collector_success", 0, "collector", "usage"))
	if _, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_system_cpu_usage_cores"); !ok {
		t.Error("the values are gone while throttled")
	}
	sim.ClearFaults(t)
	testbin.WaitFor(t, 60*time.Second, "the recovery", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_collector_success", 1, "collector", "usage"))
}

// TestUsageSlowAPI: series answers slower than --api.timeout fail; the
// read ends within two usage intervals and says so, with the last values,
// and the part recovers when the answers are fast again.
func TestUsageSlowAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	_, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.usage.interval=2s", "--collect.usage.series=system_memory_total_bytes", "--api.timeout=500ms", "--no-rightsizing")...)
	testbin.WaitFor(t, 60*time.Second, "usage values", func() bool {
		_, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_system_memory_total_bytes")
		return ok
	})
	sim.Fault(t, `{"operation":"getServiceMetricsSeries","latency":"3s"}`)
	testbin.WaitFor(t, 60*time.Second, "the slow reads to be reported", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_collector_success", 0, "collector", "usage"))
	if _, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_system_memory_total_bytes"); !ok {
		t.Error("the values are gone while the API is slow")
	}
	sim.ClearFaults(t)
	testbin.WaitFor(t, 60*time.Second, "the recovery", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_collector_success", 1, "collector", "usage"))
}
