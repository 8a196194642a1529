package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// The tests of this file run the exporter against the standalone simulator
// through the failures of the field: fleets larger than one interval's
// budget, cycles longer than the staleness bound, huge Retry-After values,
// poisoned records, duplicate ids and long outages. In production these
// take minutes; here the intervals are seconds and the rate limits scaled
// with them, so that the call budget forces the same rounds (their logic
// is on the fake clock in poller/budget_test.go). None asserts a duration,
// only what every scrape shows while they run.

// startPolling starts the exporter against sim with args and waits until
// /metrics answers, not until it is ready: readiness is part of what the
// tests check.
func startPolling(t *testing.T, sim *testbin.Sim, args ...string) (*testbin.Process, string) {
	t.Helper()
	return testbin.StartExporterServing(t, sim.Env(), args...)
}

// startFleetSim starts the simulator with a generated fleet: services with
// one replica set each, and VPCs with two peerings each. It serves the first
// revision, in which replica sets cost one call per service (revision 2026
// sends them inline: see revision_test.go).
func startFleetSim(t *testing.T, services, vpcs int) *testbin.Sim {
	t.Helper()
	return testbin.SimAt(testbin.StartSim(t, "--api.revision=2024", "--scenario=fleet", fmt.Sprintf("--fleet.services=%d", services),
		"--fleet.replica-sets-per-service=1", fmt.Sprintf("--fleet.vpcs=%d", vpcs), "--fleet.peerings-per-vpc=2"))
}

// scrape fetches and parses /metrics; ok is false when it cannot.
func scrape(url string) (map[string]*dto.MetricFamily, bool) {
	code, body := testbin.Get(url + "/metrics")
	if code != http.StatusOK {
		return nil, false
	}
	fams, err := testbin.Families(body)
	return fams, err == nil
}

func ids(fams map[string]*dto.MetricFamily, family, label string) []string {
	return testbin.LabelValues(fams, family, label)
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := testbin.Value(fams, name, labels...)
	if !ok {
		t.Fatalf("no series %s", testbin.Describe(name, labels...))
	}
	return v
}

// TestPollingLargeFleetDefaultBudget: a fleet whose per-service calls do
// not fit in one interval still shows every service within seconds, never
// fewer afterwards, every replica set within the refresh period the
// exporter announces, and a WARN line that says why. At the defaults (5
// requests/s, 60 s) 1,500 services take six cycles; here 600 services at
// 15 requests/s and 6 s take eight, and each call still has a quarter of
// a second (4 in flight at 15/s): at a higher pace a loaded machine
// overruns the cycles.
func TestPollingLargeFleetDefaultBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	const services, interval = 600, 6 * time.Second
	sim := startFleetSim(t, services, 10)
	p, url := startPolling(t, sim, "--collect.interval="+interval.String(), "--api.rate-limit=15")

	// The services come from one listServices call: they are published
	// at once, not at the end of a refresh that needs 600 more calls.
	var fams map[string]*dto.MetricFamily
	testbin.WaitFor(t, 60*time.Second, "every service on /metrics", func() bool {
		var ok bool
		fams, ok = scrape(url)
		return ok && len(ids(fams, "clouddb_service_info", "service_id")) == services
	})
	// Shown before their replica sets could all be read: not at the end of
	// the refresh.
	if n := len(ids(fams, "clouddb_replica_set_info", "replica_set_id")); n == services {
		t.Errorf("every service first shown with all %d replica sets: published at the end of the refresh, not at once", n)
	}
	start := time.Now()
	testbin.WaitFor(t, time.Minute, "the refresh period", func() bool {
		fams, _ = scrape(url)
		v, ok := testbin.Value(fams, "clouddb_exporter_poll_children_refresh_period_seconds", "project_id", testbin.SimProject)
		return ok && v > 0
	})
	period := time.Duration(value(t, fams, "clouddb_exporter_poll_children_refresh_period_seconds", "project_id", testbin.SimProject) * float64(time.Second))
	if period <= interval {
		t.Fatalf("refresh period %s: %d services cannot be refreshed in one interval of %s", period, services, interval)
	}
	if out := p.Output(); !strings.Contains(out, "WARN") || !strings.Contains(out, "--api.rate-limit") {
		t.Errorf("no WARN line about the call budget:\n%s", out)
	}

	// Over the announced period (and one interval of slack for the cycle
	// boundaries), no scrape shows fewer services, and every replica set
	// shows up.
	seen := map[string]bool{}
	minRS := 0
	for time.Since(start) < period+interval {
		fams, ok := scrape(url)
		if !ok {
			t.Fatal("/metrics failed")
		}
		if n := len(ids(fams, "clouddb_service_info", "service_id")); n != services {
			t.Fatalf("%s after all were shown: %d services, want %d", time.Since(start).Round(time.Second), n, services)
		}
		rs := ids(fams, "clouddb_replica_set_info", "replica_set_id")
		if len(rs) < minRS {
			t.Fatalf("replica sets went from %d to %d", minRS, len(rs))
		}
		minRS = len(rs)
		for _, id := range rs {
			seen[id] = true
		}
		if len(seen) == services && time.Since(start) > 2*interval {
			break
		}
		time.Sleep(interval / 10)
	}
	if len(seen) != services {
		t.Errorf("%d of %d replica sets seen within the announced refresh period %s", len(seen), services, period)
	}
}

// TestPollingLongCycleKeepsData: a refresh of the fleet longer than
// --collect.max-staleness (300 services at 20 requests/s need 15 s, the
// bound is 4 s) never expires what it has just read. Watched for a whole
// announced refresh period and at least three staleness bounds.
func TestPollingLongCycleKeepsData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	const services, staleness = 300, 4 * time.Second
	sim := startFleetSim(t, services, 5)
	_, url := startPolling(t, sim, "--collect.interval=2s", "--collect.max-staleness="+staleness.String(), "--api.rate-limit=20")
	var period time.Duration
	testbin.WaitFor(t, 60*time.Second, "every service and the refresh period on /metrics", func() bool {
		fams, ok := scrape(url)
		v, _ := testbin.Value(fams, "clouddb_exporter_poll_children_refresh_period_seconds", "project_id", testbin.SimProject)
		period = time.Duration(v * float64(time.Second))
		return ok && len(ids(fams, "clouddb_service_info", "service_id")) == services && v > 0
	})
	if period <= staleness {
		t.Fatalf("refresh period %s: not longer than --collect.max-staleness=%s, the test proves nothing", period, staleness)
	}
	maxRS := 0
	for start := time.Now(); time.Since(start) < max(period+2*time.Second, 3*staleness); time.Sleep(500 * time.Millisecond) {
		fams, ok := scrape(url)
		if !ok {
			t.Fatal("/metrics failed")
		}
		if n := len(ids(fams, "clouddb_service_info", "service_id")); n != services {
			t.Fatalf("after %s: %d services, want %d", time.Since(start).Round(time.Second), n, services)
		}
		for _, family := range []string{"clouddb_replica_set_info", "clouddb_vpc_info"} {
			if n := len(ids(fams, family, "project_id")); n == 0 && (family == "clouddb_vpc_info" || maxRS > 0) {
				t.Fatalf("after %s: no %s", time.Since(start).Round(time.Second), family)
			}
		}
		maxRS = max(maxRS, len(ids(fams, "clouddb_replica_set_info", "replica_set_id")))
		if v := value(t, fams, "clouddb_exporter_collector_success", "project_id", testbin.SimProject, "collector", "services"); v != 1 {
			t.Fatalf("collector_success{services} = %v with a healthy API", v)
		}
	}
	if maxRS == 0 {
		t.Error("no replica set was ever shown")
	}
}

// TestPollingHugeRetryAfter: one 429 with Retry-After far beyond the retry
// cap fails that call for the cycle instead of stalling publication.
func TestPollingHugeRetryAfter(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	// The first revision: its listReplicaSets calls are what the fault hits.
	sim := testbin.SimAt(testbin.StartSim(t, "--api.revision=2024"))
	p, url := startPolling(t, sim, "--collect.interval=5s")
	var before map[string]*dto.MetricFamily
	testbin.WaitFor(t, 60*time.Second, "services on /metrics", func() bool {
		var ok bool
		before, ok = scrape(url)
		return ok && len(ids(before, "clouddb_service_info", "service_id")) > 0
	})
	services := len(ids(before, "clouddb_service_info", "service_id"))
	sim.Fault(t, `{"operation": "listReplicaSets", "status": 429, "retry_after": "999999", "count": 1}`)
	faulted := time.Now()
	// Publication goes on: snapshots taken after the fault keep coming, with
	// every service, while the failed part reports its failure.
	testbin.WaitFor(t, 60*time.Second, "a snapshot three intervals after the fault, with the replica sets failing", func() bool {
		fams, ok := scrape(url)
		if !ok {
			return false
		}
		if n := len(ids(fams, "clouddb_service_info", "service_id")); n != services {
			t.Fatalf("%d services after the fault, want %d", n, services)
		}
		taken, ok := testbin.Value(fams, "clouddb_exporter_snapshot_timestamp_seconds", "project_id", testbin.SimProject)
		return ok && time.Unix(int64(taken), 0).After(faulted.Add(15*time.Second)) &&
			value(t, fams, "clouddb_exporter_collector_success", "project_id", testbin.SimProject, "collector", "services") == 1
	})
	if !strings.Contains(p.Output(), "Retry-After") {
		t.Errorf("the deferred call was not logged:\n%s", p.Output())
	}
}

// TestPollingPoisonedRecords: a number that overflows, a "NaN" and a date
// that is not one cost their own field, not the whole list.
func TestPollingPoisonedRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	listed := simServices(t, sim)
	sim.Fault(t, `{"operation": "listServices", "edit": {"index": 0, "field": "resources.0.spec.cpu_millis", "value": 1e308}}`)
	sim.Fault(t, `{"operation": "listServices", "edit": {"index": 1, "field": "resources.0.spec.memory_gbs", "value": "NaN"}}`)
	sim.Fault(t, `{"operation": "listServices", "edit": {"index": 2, "field": "created", "value": "yesterday"}}`)
	p, url := startPolling(t, sim, "--collect.interval=2s")

	var fams map[string]*dto.MetricFamily
	testbin.WaitFor(t, 60*time.Second, "services and a decode error count on /metrics", func() bool {
		var ok bool
		fams, ok = scrape(url)
		if !ok || len(ids(fams, "clouddb_service_info", "service_id")) < 3 {
			return false
		}
		v, ok := testbin.Value(fams, "clouddb_exporter_api_decode_errors_total", "operation", "listServices")
		return ok && v >= 3
	})
	if got := ids(fams, "clouddb_service_info", "service_id"); len(got) != len(listed) {
		t.Errorf("%d services exported, want all %d", len(got), len(listed))
	}
	if v := value(t, fams, "clouddb_exporter_collector_success", "project_id", testbin.SimProject, "collector", "services"); v != 1 {
		t.Errorf("collector_success{services} = %v: a bad field failed the list", v)
	}
	first, second, third := listed[0], listed[1], listed[2]
	count := func(name, id string) int {
		n := 0
		for _, m := range fams[name].GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "service_id" && lp.GetValue() == id {
					n++
				}
			}
		}
		return n
	}
	// The first resource of each service is the one poisoned; an HA
	// service has more.
	for _, tt := range []struct {
		id       string
		cpu, mem int // series missing
	}{{first, 1, 0}, {second, 0, 1}} {
		res := int(value(t, fams, "clouddb_service_resources", "service_id", tt.id))
		if got := count("clouddb_service_cpu_cores", tt.id); got != res-tt.cpu {
			t.Errorf("service %s: %d cpu_cores series for %d resources, want %d", tt.id, got, res, res-tt.cpu)
		}
		if got := count("clouddb_service_memory_bytes", tt.id); got != res-tt.mem {
			t.Errorf("service %s: %d memory_bytes series for %d resources, want %d", tt.id, got, res, res-tt.mem)
		}
	}
	if count("clouddb_service_created_timestamp_seconds", third) != 0 || count("clouddb_service_status", third) == 0 {
		t.Errorf("service %s: want created dropped and the status kept", third)
	}
	out := p.Output()
	for _, want := range []string{first, second, third} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not name service %s", want)
		}
	}
	// Logged once, not once per cycle: wait for more cycles, then count.
	n := value(t, fams, "clouddb_exporter_api_decode_errors_total", "operation", "listServices")
	testbin.WaitFor(t, 60*time.Second, "three more cycles", func() bool {
		fams, ok := scrape(url)
		v, _ := testbin.Value(fams, "clouddb_exporter_api_decode_errors_total", "operation", "listServices")
		return ok && v >= n+9
	})
	lines := 0
	for line := range strings.Lines(p.Output()) {
		if strings.Contains(line, third) && strings.Contains(line, "created") {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("the bad created field was logged %d times, want once:\n%s", lines, p.Output())
	}
}

// TestPollingDuplicateIDs: the same service twice in one answer, with two
// statuses, keeps one of them, stably, and logs it at most once per cycle.
func TestPollingDuplicateIDs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	id := simServices(t, sim)[0]
	sim.Fault(t, `{"operation": "listServices", "edit": {"index": 0, "field": "status", "value": "UNSTABLE", "append": true}}`)
	p, url := startPolling(t, sim, "--collect.interval=1s", "--collect.transition-interval=1s")
	var fams map[string]*dto.MetricFamily
	testbin.WaitFor(t, 60*time.Second, "services on /metrics", func() bool {
		var ok bool
		fams, ok = scrape(url)
		return ok && len(ids(fams, "clouddb_service_info", "service_id")) > 0
	})
	status := testbin.LabelValues(fams, "clouddb_service_status", "status", "service_id", id)
	since := value(t, fams, "clouddb_service_status_changed_timestamp_seconds", "service_id", id)
	start := time.Now()
	for time.Since(start) < 15*time.Second {
		fams, ok := scrape(url)
		if !ok {
			t.Fatal("/metrics failed")
		}
		if got := testbin.LabelValues(fams, "clouddb_service_status", "status", "service_id", id); !slices.Equal(got, status) {
			t.Fatalf("service %s flapped from %v to %v", id, status, got)
		}
		if got := value(t, fams, "clouddb_service_status_changed_timestamp_seconds", "service_id", id); got != since {
			t.Fatalf("service %s: status changed at %v, then at %v", id, since, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	counts := sim.Requests(t)
	if c := strings.Count(p.Output(), "Duplicate"); c == 0 || c > counts["listServices"] {
		t.Errorf("duplicates logged %d times over %d lists of the services", c, counts["listServices"])
	}
}

// TestPollingServicesListCutShort: the services list is applied as it is
// read, so an answer whose connection drops half way (the simulator's
// truncated fault, on every attempt) updates the services it carried,
// keeps the others as they were, removes none, and fails the part.
func TestPollingServicesListCutShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	sim := startFleetSim(t, 20, 1)
	services := simServices(t, sim)
	first, last := services[0], services[len(services)-1]
	_, url := startPolling(t, sim, "--collect.interval=1s", "--collect.transition-interval=1s",
		"--api.retry-base-delay=10ms", "--api.retry-max-delay=50ms")
	testbin.WaitFor(t, 60*time.Second, "every service on /metrics", func() bool {
		fams, ok := scrape(url)
		return ok && len(ids(fams, "clouddb_service_info", "service_id")) == len(services)
	})

	sim.Fault(t, `{"operation": "listServices", "truncated": true}`)
	sim.ServiceStatus(t, first, apiclient.ServiceUnstable)
	sim.ServiceStatus(t, last, apiclient.ServiceUnstable)
	var fams map[string]*dto.MetricFamily
	testbin.WaitFor(t, 30*time.Second, "the first service's new status from a cut answer", func() bool {
		var ok bool
		fams, ok = scrape(url)
		return ok && slices.Equal(testbin.LabelValues(fams, "clouddb_service_status", "status", "service_id", first), []string{apiclient.ServiceUnstable})
	})
	if v := value(t, fams, "clouddb_exporter_collector_success", "project_id", testbin.SimProject, "collector", "services"); v != 0 {
		t.Errorf("collector_success{services} = %v on a cut answer, want 0", v)
	}
	if got := ids(fams, "clouddb_service_info", "service_id"); len(got) != len(services) {
		t.Errorf("%d services after a cut answer, want all %d kept", len(got), len(services))
	}
	if got := testbin.LabelValues(fams, "clouddb_service_status", "status", "service_id", last); !slices.Equal(got, []string{apiclient.ServiceReady}) {
		t.Errorf("the last service, past the cut, shows status %v, want its last known READY", got)
	}

	sim.ClearFaults(t)
	testbin.WaitFor(t, 30*time.Second, "the last service's new status once the list is whole", func() bool {
		fams, ok := scrape(url)
		return ok && slices.Equal(testbin.LabelValues(fams, "clouddb_service_status", "status", "service_id", last), []string{apiclient.ServiceUnstable})
	})
}

// TestPollingOutageDefaultStaleness: at the default --collect.max-staleness
// (0), an API outage longer than every timeout and retry keeps the last
// known fleet, flagged as failing, and /sd keeps serving its targets. The
// intervals and timeouts are scaled down (1s instead of 60s and 30s): the
// outage lasts 15 of them, as the 6m30s it lasted at the defaults
// outlasted the old staleness bound; TestPollOutageKeepsLastKnown holds
// an hour of outage on the fake clock.
func TestPollingOutageDefaultStaleness(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	const interval, outage = time.Second, 15 * time.Second
	sim := testbin.SimAt(testbin.StartSim(t))
	_, url := startPolling(t, sim, "--collect.interval="+interval.String(), "--collect.transition-interval="+interval.String(),
		"--api.timeout="+interval.String(), "--api.retry-base-delay=50ms", "--api.retry-max-delay=200ms")
	var fams map[string]*dto.MetricFamily
	testbin.WaitFor(t, 60*time.Second, "services and replica sets on /metrics", func() bool {
		var ok bool
		fams, ok = scrape(url)
		return ok && len(ids(fams, "clouddb_service_info", "service_id")) > 0 && len(ids(fams, "clouddb_replica_set_info", "replica_set_id")) > 0
	})

	sim.Fault(t, `{"status": 500}`)
	start := time.Now()
	// The baseline is the first scrape that shows the outage: no call can
	// succeed after it.
	testbin.WaitFor(t, time.Minute, "collector_success{services} to show the outage", func() bool {
		var ok bool
		fams, ok = scrape(url)
		v, _ := testbin.Value(fams, "clouddb_exporter_collector_success", "project_id", testbin.SimProject, "collector", "services")
		return ok && v == 0
	})
	services := ids(fams, "clouddb_service_info", "service_id")
	replicaSets := ids(fams, "clouddb_replica_set_info", "replica_set_id")
	if len(services) == 0 || len(replicaSets) == 0 {
		t.Fatalf("the outage removed the fleet: %d services, %d replica sets", len(services), len(replicaSets))
	}
	_, sdBefore := testbin.Get(url + "/sd/services")
	if targets := sdTargets(t, sdBefore); len(targets) == 0 {
		t.Fatalf("/sd/services during the outage: %s", sdBefore)
	}
	for time.Since(start) < outage {
		fams, ok := scrape(url)
		if !ok {
			t.Fatal("/metrics failed")
		}
		if got := ids(fams, "clouddb_service_info", "service_id"); !slices.Equal(got, services) {
			t.Fatalf("%s into the outage: services %v, want %v", time.Since(start).Round(time.Second), got, services)
		}
		if got := ids(fams, "clouddb_replica_set_info", "replica_set_id"); !slices.Equal(got, replicaSets) {
			t.Fatalf("%s into the outage: replica sets %v, want %v", time.Since(start).Round(time.Second), got, replicaSets)
		}
		if v := value(t, fams, "clouddb_exporter_collector_success", "project_id", testbin.SimProject, "collector", "services"); v != 0 {
			t.Fatalf("collector_success{services} = %v during the outage", v)
		}
		if code, body := testbin.Get(url + "/sd/services"); code != http.StatusOK || !slices.Equal(sdTargets(t, body), sdTargets(t, sdBefore)) {
			t.Fatalf("%s into the outage: /sd/services %d %s, want the targets from before", time.Since(start).Round(time.Second), code, body)
		}
		time.Sleep(interval / 2)
	}
	sim.ClearFaults(t)
}

// TestSDDuringOutage: /sd/* never answer an empty list because of a
// failure: with no known target, they answer an error, and Prometheus keeps
// its previous targets.
func TestSDDuringOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	sim.Fault(t, `{"status": 500}`)
	// Opting in to dropping stale data, so that the exporter also loses
	// the targets it knew.
	p, url := startPolling(t, sim, "--collect.interval=2s", "--collect.max-staleness=4s", "--api.max-retries=0")
	testbin.WaitFor(t, 30*time.Second, "a failed first cycle", func() bool {
		return strings.Contains(p.Output(), "Collector failed")
	})
	for _, path := range []string{"/sd/services", "/sd/replica-sets", "/sd/poolers"} {
		if code, body := testbin.Get(url + path); code == http.StatusOK {
			t.Errorf("%s before any successful list: 200 %s, want an error status", path, body)
		}
	}
	sim.ClearFaults(t)
	var targets []json.RawMessage
	testbin.WaitFor(t, 60*time.Second, "targets after the outage", func() bool {
		code, body := testbin.Get(url + "/sd/services")
		return code == http.StatusOK && json.Unmarshal([]byte(body), &targets) == nil && len(targets) > 0
	})
	sim.Fault(t, `{"status": 500}`)
	testbin.WaitFor(t, 60*time.Second, "the fleet dropped as stale", func() bool {
		fams, ok := scrape(url)
		return ok && len(ids(fams, "clouddb_service_info", "service_id")) == 0
	})
	for range 10 {
		code, body := testbin.Get(url + "/sd/services")
		if code == http.StatusOK && strings.TrimSpace(body) == "[]" {
			t.Fatalf("/sd/services answers 200 [] during an outage")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// simServices lists the ids of the simulator's services, in its order;
// the tests poison or duplicate the first three.
func simServices(t *testing.T, sim *testbin.Sim) []string {
	t.Helper()
	ids := sim.ServiceIDs(t)
	if len(ids) < 3 {
		t.Fatalf("the simulator has %d services, want at least 3", len(ids))
	}
	return ids
}

// sdTargets returns the sorted targets of an /sd answer.
func sdTargets(t *testing.T, body string) []string {
	t.Helper()
	var groups []struct {
		Targets []string `json:"targets"`
	}
	if err := json.Unmarshal([]byte(body), &groups); err != nil {
		t.Fatalf("/sd answer %q: %v", body, err)
	}
	var out []string
	for _, g := range groups {
		out = append(out, g.Targets...)
	}
	slices.Sort(out)
	return out
}
