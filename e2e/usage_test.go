package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// The tests of this file run the opt-in usage collector against the
// standalone simulator, with intervals scaled down (the hidden
// --collect.min-data-interval lowers the 1m minimum).

type usageService struct {
	ServiceID string `json:"service_id"`
	Name      string `json:"name"`
}

type simSeries struct {
	Labels map[string]string `json:"labels"`
	Data   []struct {
		Time  time.Time `json:"time"`
		Value *float64  `json:"value"`
	} `json:"data"`
}

func usageServices(t *testing.T, sim *testbin.Sim) []usageService {
	t.Helper()
	var list []usageService
	sim.APIGet(t, "/projects/"+sim.Project+"/services", &list)
	return list
}

func simAvailable(t *testing.T, sim *testbin.Sim, serviceID string) []string {
	t.Helper()
	var names []string
	sim.APIGet(t, "/projects/"+sim.Project+"/services/"+serviceID+"/metrics/available-series", &names)
	return names
}

// simBucket reads the simulator's value of one label set of a series at a
// bucket's start: what the exporter must show.
func simBucket(t *testing.T, sim *testbin.Sim, serviceID, name, role string, at time.Time) (float64, bool) {
	t.Helper()
	body := fmt.Sprintf(`{"name":%q,"from":%q,"to":%q}`, name, at.Format(time.RFC3339), at.Add(time.Minute).Format(time.RFC3339))
	var out []simSeries
	sim.APIPost(t, "/projects/"+sim.Project+"/services/"+serviceID+"/metrics/series", body, &out)
	for _, s := range out {
		if s.Labels["role"] == role && len(s.Data) == 1 && s.Data[0].Value != nil {
			return *s.Data[0].Value, true
		}
	}
	return 0, false
}

func usageArgs(extra ...string) []string {
	return append([]string{"--collect.usage", "--collect.min-data-interval=1s", "--collect.interval=5s", "--api.rate-limit=1000"}, extra...)
}

// TestUsageCollector: the values equal the simulator's newest non-null
// bucket; one interval costs exactly selected services x available
// selected series reads, plus one available-series read per service; an
// outage keeps the last values, flagged.
func TestUsageCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	selected := map[string]string{}
	for _, s := range usageServices(t, sim) {
		if s.Name == "metrics-prod" || s.Name == "orders-db" {
			selected[s.ServiceID] = s.Name
		}
	}
	if len(selected) != 2 {
		t.Fatalf("the demo has no metrics-prod and orders-db: %v", selected)
	}
	series := []string{"system_cpu_usage_millicores", "system_memory_total_bytes", "database_job_success"}
	want := 0
	for id := range selected {
		for _, n := range simAvailable(t, sim, id) {
			if slices.ContainsFunc(series, func(s string) bool { return strings.HasSuffix(n, "_"+s) }) {
				want++
			}
		}
	}
	sim.ResetRequests(t) // the reads above are the test's
	args := usageArgs("--collect.usage.interval=1h", "--collect.usage.service-name-regex=metrics-prod|orders-db", "--no-rightsizing")
	for _, s := range series {
		args = append(args, "--collect.usage.series="+s)
	}
	_, url := testbin.StartExporter(t, sim.Env(), args...)

	// One usage interval (an hour: only the first one runs here).
	testbin.WaitFor(t, 60*time.Second, "the first usage read", func() bool {
		_, published := testbin.Value(scrapeFams(t, url), "clouddb_exporter_collector_success", "collector", "usage")
		return published && sim.Requests(t)["getServiceMetricsSeries"] >= want
	})
	fams := scrapeFams(t, url)
	got := sim.Requests(t)
	if got["getServiceMetricsSeries"] != want || got["getServiceMetricsAvailableSeries"] != len(selected) {
		t.Errorf("one usage interval made %d series reads and %d available-series reads, want %d and %d",
			got["getServiceMetricsSeries"], got["getServiceMetricsAvailableSeries"], want, len(selected))
	}
	if v := value(t, fams, "clouddb_exporter_collector_success", "collector", "usage"); v != 1 {
		t.Errorf("usage collector success = %v", v)
	}
	for id, name := range selected {
		// The node's bucket is the newest of its series (CPU and the job
		// here); the CPU value is from the CPU series' newest non-null
		// bucket, at it or a few minutes before (the simulator's gaps are
		// per series).
		bucket := value(t, fams, "clouddb_service_usage_bucket_timestamp_seconds", "service_id", id, "role", "primary", "ordinal", "0")
		at := time.Unix(int64(bucket), 0).UTC()
		var simValue float64
		var cpuAt time.Time
		for back := range 5 {
			if v, ok := simBucket(t, sim, id, "cloudsim_system_cpu_usage_millicores", "primary", at.Add(-time.Duration(back)*time.Minute)); ok {
				simValue, cpuAt = v, at.Add(-time.Duration(back)*time.Minute)
				break
			}
		}
		if cpuAt.IsZero() {
			t.Fatalf("%s: the simulator has no CPU value at the node's bucket %s nor in the 4 minutes before", name, at)
		}
		if got := value(t, fams, "clouddb_service_system_cpu_usage_cores", "service_id", id, "role", "primary"); got != simValue/1000 {
			t.Errorf("%s: cpu usage %v cores, the simulator's newest CPU bucket %s holds %v millicores", name, got, cpuAt, simValue)
		}
		// The newest non-null bucket: the simulator's data lags a minute
		// and has few gaps, so it is at most a few minutes older than the
		// read.
		read := value(t, fams, "clouddb_exporter_collector_last_success_timestamp_seconds", "collector", "usage")
		if age := time.Unix(int64(read), 0).Sub(at); age < time.Minute || age > 5*time.Minute {
			t.Errorf("%s: exported bucket %s is %s older than the read", name, at, age)
		}
	}
	if _, ok := testbin.Value(fams, "clouddb_service_system_disk_usage_bytes"); ok {
		t.Error("a series not selected is exported")
	}
	if _, ok := testbin.Value(fams, "clouddb_service_system_memory_total_bytes", "service_id", firstOther(selected, usageServices(t, sim))); ok {
		t.Error("a service not selected is exported")
	}
}

func firstOther(selected map[string]string, all []usageService) string {
	for _, s := range all {
		if _, ok := selected[s.ServiceID]; !ok {
			return s.ServiceID
		}
	}
	return ""
}

// TestUsageOutageKeepsValues: failing series reads keep the last values,
// flagged by the usage collector's success and last-success time.
func TestUsageOutageKeepsValues(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	_, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.usage.interval=2s", "--collect.usage.series=system_memory_total_bytes", "--api.max-retries=0", "--no-rightsizing")...)
	testbin.WaitFor(t, 60*time.Second, "usage values", func() bool {
		_, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_system_memory_total_bytes")
		return ok
	})
	before := scrapeFams(t, url)
	n := len(before["clouddb_service_system_memory_total_bytes"].GetMetric())
	sim.Fault(t, `{"operation":"getServiceMetricsSeries","status":503}`)
	testbin.WaitFor(t, 60*time.Second, "the usage collector to report the failure", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_collector_success", 0, "collector", "usage"))
	after := scrapeFams(t, url)
	if got := len(after["clouddb_service_system_memory_total_bytes"].GetMetric()); got != n {
		t.Errorf("%d memory series during the outage, %d before", got, n)
	}
	for _, m := range before["clouddb_service_system_memory_total_bytes"].GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName(), l.GetValue())
		}
		if v := value(t, after, "clouddb_service_system_memory_total_bytes", labels...); v != m.GetGauge().GetValue() {
			t.Errorf("%v: %v during the outage, %v before", labels, v, m.GetGauge().GetValue())
		}
	}
}

// TestUsageUnsupportedAPI: the first revision has no usage paths (404):
// after three intervals of 404s on every read, usage is off for the
// project with one log line, and not asked again every interval.
func TestUsageUnsupportedAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t, "--api.revision=2024"))
	services := len(sim.ServiceIDs(t))
	p, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.usage.interval=1s")...)
	waitSuccesses(t, url, "usage", 4, "a usage interval") // four usage intervals
	// The first revision's simulator counts no request to a path it does
	// not have: the exporter's own API metrics count them (their encoding
	// may be a few seconds old). Every service is asked in each of the
	// three intervals of 404s that make the API one without usage series.
	var avail float64
	testbin.WaitFor(t, 30*time.Second, "three intervals of available-series reads", func() bool {
		avail, _ = testbin.Value(scrapeFams(t, url), "clouddb_exporter_api_requests_total", "operation", "getServiceMetricsAvailableSeries", "code", "404")
		return int(avail) >= 3*services
	})
	fams := scrapeFams(t, url)
	if _, ok := testbin.Value(fams, "clouddb_exporter_api_requests_total", "operation", "getServiceMetricsSeries", "code", "200"); ok || int(avail) != 3*services {
		t.Errorf("four usage intervals against a first-revision API: %v available-series reads (want %d) and series reads %v", avail, 3*services, ok)
	}
	if n := strings.Count(p.Output(), "no usage series"); n != 1 {
		t.Errorf("%d log lines about the missing usage series, want 1:\n%s", n, p.Output())
	}
}

// TestUsageAndLogsOffByDefault: without their flags, nothing of the data
// collectors runs: no call, no series, no part.
func TestUsageAndLogsOffByDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	_, url := testbin.StartExporter(t, sim.Env(), "--collect.interval=1s")
	waitSuccesses(t, url, "services", 3, "a poll cycle")
	for op, n := range sim.Requests(t) {
		if strings.Contains(op, "Metrics") || strings.Contains(op, "Logs") {
			t.Errorf("%d %s requests without the collector's flag", n, op)
		}
	}
	code, body := testbin.Get(url + "/metrics")
	if code != http.StatusOK {
		t.Fatal(code)
	}
	for _, bad := range []string{"clouddb_service_system_", "clouddb_service_database_", "clouddb_service_usage_", "clouddb_exporter_usage_", `collector="usage"`, "clouddb_service_log_"} {
		if strings.Contains(body, bad) {
			t.Errorf("/metrics holds %s without the collector's flag", bad)
		}
	}
}

// TestUsageLargeFleetDefaultBudget: 1,500 services at the default rate
// limit: the state is refreshed every interval while usage goes
// round-robin, with one WARN and the period exported.
func TestUsageLargeFleetDefaultBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t, "--scenario=fleet", "--fleet.services=1500", "--fleet.replica-sets-per-service=0", "--fleet.vpcs=2", "--fleet.peerings-per-vpc=1"))
	p, url := testbin.StartExporter(t, sim.Env(), "--collect.usage", "--collect.min-data-interval=1s", "--collect.interval=4s", "--collect.usage.interval=4s")
	testbin.WaitFor(t, 60*time.Second, "the round-robin WARN", func() bool {
		return strings.Contains(p.Output(), "refreshed round-robin")
	})
	testbin.WaitFor(t, 60*time.Second, "usage values", func() bool {
		_, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_system_cpu_usage_cores")
		return ok
	})
	// The state keeps its interval: the services part succeeds cycle
	// after cycle while usage reads go on.
	waitSuccesses(t, url, "services", 3, "a full poll cycle")
	fams := scrapeFams(t, url)
	if v := value(t, fams, "clouddb_exporter_poll_cycle_overruns_total"); v != 0 {
		t.Errorf("%v cycles overran while usage ran", v)
	}
	if period := value(t, fams, "clouddb_exporter_usage_refresh_period_seconds"); period <= 4 {
		t.Errorf("usage refresh period %vs, want a multiple of the 4s interval", period)
	}
	if n := strings.Count(p.Output(), "refreshed round-robin"); n != 1 {
		t.Errorf("%d round-robin WARN lines, want 1", n)
	}
	for _, line := range strings.Split(p.Output(), "\n") {
		if strings.Contains(line, "usage series in one usage interval") {
			if !strings.Contains(line, "calls_needed") || !strings.Contains(line, "--api.rate-limit") {
				t.Errorf("the WARN line lacks the numbers or the fix: %s", line)
			}
		}
	}
}

func scrapeFams(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	_, fams := testbin.Scrape(t, url)
	return fams
}

// TestUsageNodesAreTheServiceResources: a service exports the usage of as
// many nodes as clouddb_service_resources counts, which is what
// CloudDBServiceUsageMissing compares to tell a node that left (replaced,
// an HA replica removed) from one that went silent.
func TestUsageNodesAreTheServiceResources(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	_, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.usage.interval=2s", "--collect.usage.series=system_memory_total_bytes", "--no-rightsizing")...)
	// A successful usage read need not have asked for every series (its
	// calls start within an interval, the rest wait for the next): wait
	// until every service that reports its memory reports it for as many
	// nodes as it has, and say the last difference if that never comes.
	var mismatch string
	defer func() {
		if t.Failed() && mismatch != "" {
			t.Log("last difference: " + mismatch)
		}
	}()
	testbin.WaitFor(t, 60*time.Second, "every reporting service's nodes", func() bool {
		fams := scrapeFams(t, url)
		nodes := usageNodes(fams["clouddb_service_system_memory_total_bytes"])
		mismatch = ""
		for id, ordinals := range nodes {
			if want := value(t, fams, "clouddb_service_resources", "service_id", id); float64(len(ordinals)) != want {
				mismatch = fmt.Sprintf("service %s: %d nodes report usage (%v), clouddb_service_resources is %v", id, len(ordinals), ordinals, want)
			}
		}
		return len(nodes) > 0 && mismatch == ""
	})
}

// usageNodes returns the nodes (ordinals) each service reports a usage family for.
func usageNodes(f *dto.MetricFamily) map[string]map[string]bool {
	nodes := map[string]map[string]bool{}
	for _, m := range f.GetMetric() {
		var id, ordinal string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "service_id":
				id = l.GetValue()
			case "ordinal":
				ordinal = l.GetValue()
			}
		}
		if nodes[id] == nil {
			nodes[id] = map[string]bool{}
		}
		nodes[id][ordinal] = true
	}
	return nodes
}

// TestUsageRejectsImpossibleValues: API answers whose first label set
// says -5 connections: /metrics shows no negative connections, counts the
// rejections in clouddb_exporter_api_values_rejected_total, and keeps the
// rest of each answer (a service's other nodes). A usage read starts its
// calls within one interval and leaves the rest to the next one, and
// succeeds without them: a successful read need not have read a series.
// Here the first read's available series answer after its interval, as on
// a loaded machine, so the test waits for the answers it checks.
func TestUsageRejectsImpossibleValues(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	bucket := time.Now().UTC().Truncate(time.Minute).Add(-2 * time.Minute).Format(time.RFC3339)
	sim.Fault(t, fmt.Sprintf(`{"operation":"getServiceMetricsSeries","edit":{"index":0,"field":"data","value":[{"time":%q,"value":-5}]}}`, bucket))
	sim.Fault(t, fmt.Sprintf(`{"operation":"getServiceMetricsAvailableSeries","latency":"2500ms","count":%d}`, len(sim.ServiceIDs(t))))
	_, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.usage.interval=2s", "--collect.usage.series=database_num_connections", "--no-rightsizing")...)
	var fams map[string]*dto.MetricFamily
	exported := map[string]int{}
	testbin.WaitFor(t, 60*time.Second, "rejections counted and a node's connections kept", func() bool {
		fams = scrapeFams(t, url)
		clear(exported)
		for _, m := range fams["clouddb_service_database_connections"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "service_id" {
					exported[l.GetValue()]++
				}
			}
		}
		v, ok := testbin.Value(fams, "clouddb_exporter_api_values_rejected_total", "field", "database_num_connections", "reason", "negative")
		return ok && v >= 1 && len(exported) > 0
	})
	for _, m := range fams["clouddb_service_database_connections"].GetMetric() {
		if v := m.GetGauge().GetValue(); v < 0 {
			t.Errorf("connections %v exported: %v", v, m.GetLabel())
		}
	}
	// Each answer's first label set had only the rejected bucket; the
	// others are kept.
	for _, id := range testbin.LabelValues(fams, "clouddb_service_info", "service_id") {
		nodes := int(value(t, fams, "clouddb_service_resources", "service_id", id))
		if exported[id] > nodes-1 {
			t.Errorf("service %s: %d nodes' connections exported of %d, want the first one's rejected", id, exported[id], nodes)
		}
	}
}

// quietOrdersDB starts a simulator whose orders-db logs only the entries
// the test adds, and returns it with orders-db's id.
func quietOrdersDB(t *testing.T) (*testbin.Sim, string) {
	t.Helper()
	sim := testbin.SimAt(testbin.StartSim(t))
	var id string
	for _, s := range usageServices(t, sim) {
		if s.Name == "orders-db" {
			id = s.ServiceID
		}
	}
	sim.AddLogEntries(t, id, nil, 0)
	return sim, id
}
