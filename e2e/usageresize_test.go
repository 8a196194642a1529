package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

const gib = 1 << 30

// nodeTotals returns a service's nodes' CPU totals (cores) and memory
// totals (bytes) by ordinal.
func nodeTotals(fams map[string]*dto.MetricFamily, serviceID string) (cpu, mem map[string]float64) {
	byOrdinal := func(name string) map[string]float64 {
		out := map[string]float64{}
		for _, m := range fams[name].GetMetric() {
			if label(m, "service_id") == serviceID {
				out[label(m, "ordinal")] = m.GetGauge().GetValue()
			}
		}
		return out
	}
	return byOrdinal("clouddb_service_system_cpu_total_cores"), byOrdinal("clouddb_service_system_memory_total_bytes")
}

// totalsAre reports whether every node of serviceID (as many as
// clouddb_service_resources counts) exports cores and memBytes as its totals.
func totalsAre(t *testing.T, fams map[string]*dto.MetricFamily, serviceID string, cores, memBytes float64) bool {
	t.Helper()
	nodes, ok := testbin.Value(fams, "clouddb_service_resources", "service_id", serviceID)
	cpu, mem := nodeTotals(fams, serviceID)
	if !ok || nodes < 1 || float64(len(cpu)) != nodes || float64(len(mem)) != nodes {
		return false
	}
	for ordinal, v := range cpu {
		if v != cores || mem[ordinal] != memBytes {
			return false
		}
	}
	return true
}

// TestUsageTotalsFollowResize: the nodes' totals, read only at the first
// read, about hourly and after a change of the service's shape, follow a
// resize made at the API: the resized service's totals move to the new
// size within a few intervals. A service left alone keeps its totals on
// /metrics without reading them again: with every series answer edited
// afterwards, its CPU usage and the resized service's totals show the
// edit, its totals do not.
func TestUsageTotalsFollowResize(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t, "--timing.configure=1s"))
	ids := map[string]string{}
	for _, s := range usageServices(t, sim) {
		ids[s.Name] = s.ServiceID
	}
	// orders-db is 2000 millicores and 8 GiB, metrics-prod 4000 and 16 GiB
	// on two nodes (cloudsim/scenario.go).
	resized, kept := ids["orders-db"], ids["metrics-prod"]
	if resized == "" || kept == "" {
		t.Fatalf("the demo has no orders-db and metrics-prod: %v", ids)
	}
	_, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.usage.interval=2s", "--no-rightsizing",
		"--collect.usage.service-name-regex=orders-db|metrics-prod",
		"--collect.usage.series=system_cpu_usage_millicores",
		"--collect.usage.series=system_cpu_total_millicores",
		"--collect.usage.series=system_memory_total_bytes")...)
	var fams map[string]*dto.MetricFamily
	defer func() {
		if t.Failed() && fams != nil {
			for _, id := range []string{resized, kept} {
				cpu, mem := nodeTotals(fams, id)
				t.Logf("service %s: last CPU totals %v, memory totals %v", id, cpu, mem)
			}
		}
	}()
	// A 2 s read's window holds one or two closed 1-minute buckets, and the
	// simulator loses one bucket in thirty: a node may wait for the next
	// bucket to close, a minute and its lag. Each wait allows two.
	const bucketWait = 150 * time.Second
	testbin.WaitFor(t, bucketWait, "both services' totals at their sizes", func() bool {
		fams = scrapeFams(t, url)
		return totalsAre(t, fams, resized, 2, 8*gib) && totalsAre(t, fams, kept, 4, 16*gib)
	})

	sim.APIWrite(t, http.MethodPost, "/projects/"+sim.Project+"/services/"+resized+"/resize", `{"cpu_millis":3000,"memory_gbs":12}`, http.StatusAccepted, nil)
	testbin.WaitFor(t, bucketWait, "the resized service's totals at its new size", func() bool {
		fams = scrapeFams(t, url)
		return totalsAre(t, fams, resized, 3, 12*gib)
	})
	if !totalsAre(t, fams, kept, 4, 16*gib) {
		t.Error("the service left alone lost its totals or changed them")
	}

	// From now on every series answer's first label set (the primary) has
	// one bucket of 7. The resized service's totals are read every interval
	// for the interval and the API's lag after the change (minutes), so
	// they show it; the other service's CPU usage is read every interval
	// and shows it; its totals are not due for half an hour and must not.
	bucket := time.Now().UTC().Truncate(time.Minute).Add(-2 * time.Minute).Format(time.RFC3339)
	sim.Fault(t, fmt.Sprintf(`{"operation":"getServiceMetricsSeries","edit":{"index":0,"field":"data","value":[{"time":%q,"value":7}]}}`, bucket))
	primary := []string{"role", "primary"}
	testbin.WaitFor(t, 45*time.Second, "reads after the edit: the resized service's totals and the other's CPU usage", func() bool {
		fams = scrapeFams(t, url)
		keptCPU, ok1 := testbin.Value(fams, "clouddb_service_system_cpu_usage_cores", append([]string{"service_id", kept}, primary...)...)
		resizedTotal, ok2 := testbin.Value(fams, "clouddb_service_system_cpu_total_cores", append([]string{"service_id", resized}, primary...)...)
		return ok1 && ok2 && keptCPU == 0.007 && resizedTotal == 0.007
	})
	// A read's calls may straddle two intervals: let two more reads end.
	waitSuccesses(t, url, "usage", 3, "a usage read")
	fams = scrapeFams(t, url)
	if !totalsAre(t, fams, kept, 4, 16*gib) {
		t.Error("the service left alone had its totals read again (or lost them) after the other's resize")
	}
}
