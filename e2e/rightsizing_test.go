package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
	"github.com/clouddb/clouddb_exporter/pricing"
	"github.com/clouddb/clouddb_exporter/rightsizing"
)

// rightsizingOf reads each service's finding, recommended size and saving,
// by service name.
func rightsizingOf(fams map[string]*dto.MetricFamily) map[string]string {
	names := serviceNames(fams)
	out := map[string]string{}
	for _, m := range fams["clouddb_service_rightsizing_finding"].GetMetric() {
		if m.GetGauge().GetValue() != 1 {
			continue
		}
		id := label(m, "service_id")
		line := label(m, "finding")
		for _, s := range fams["clouddb_service_rightsizing_recommended_size_info"].GetMetric() {
			if label(s, "service_id") == id {
				line += " " + label(s, "cpu_millis") + "/" + label(s, "memory_gbs")
			}
		}
		if v, ok := sampleOf(fams, "clouddb_service_rightsizing_saving_per_hour", "service_id", id); ok {
			line += " saving " + strconv.FormatFloat(v, 'f', -1, 64)
		}
		out[names[id]] = line
	}
	return out
}

// TestRightsizing: on the demo's usage, each finding where its shape
// dictates it (orders-db barely loaded, search-ai near its size all day,
// dev-sandbox on the daily curve that its size fits, and every service
// with a window longer than the history read), with the saving at the
// example prices; and after a restart that reads the state file and no
// usage, the same recommendations.
func TestRightsizing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	sim := testbin.StartSim(t)
	state := filepath.Join(t.TempDir(), "state.json")
	// An hour, the first read's backfill: in half an hour the simulator's
	// lost buckets, a few in a row at times, make insufficient data.
	common := []string{"--collect.interval=2s", "--api.rate-limit=200", "--api.rate-burst=200",
		"--pricing.file=../deploy/pricing.example.yml", "--rightsizing.window=1h", "--state.file=" + state}
	p, addr := testbin.StartExporter(t, testbin.ExporterEnv(sim), append(common,
		"--collect.usage", "--collect.min-data-interval=1s", "--collect.usage.interval=2s",
		"--collect.usage.series=system_cpu_usage_millicores", "--collect.usage.series=system_memory_usage_bytes")...)
	want := map[string]string{
		"orders-db":   "over_provisioned 1000/4 saving 0.09",
		"search-ai":   "under_provisioned 2000/8 saving -0.09",
		"dev-sandbox": "optimal 500/2 saving 0",
	}
	var got map[string]string
	testbin.WaitFor(t, 90*time.Second, "a finding for each demo service of known shape", func() bool {
		_, fams := testbin.Scrape(t, addr)
		got = rightsizingOf(fams)
		for name, w := range want {
			if got[name] != w {
				return false
			}
		}
		return true
	})
	before := maps.Clone(got)

	// A window longer than the usage read so far (the first read backfills
	// an hour at most): too little to say anything.
	_, long := testbin.StartExporter(t, testbin.ExporterEnv(sim), "--collect.interval=2s", "--api.rate-limit=200", "--api.rate-burst=200",
		"--rightsizing.window=3h", "--collect.usage", "--collect.min-data-interval=1s", "--collect.usage.interval=2s",
		"--collect.usage.series=system_cpu_usage_millicores", "--collect.usage.series=system_memory_usage_bytes")
	testbin.WaitFor(t, 90*time.Second, "insufficient data with a window longer than the history read", func() bool {
		_, fams := testbin.Scrape(t, long)
		findings := rightsizingOf(fams)
		return findings["orders-db"] == "insufficient_data" && findings["search-ai"] == "insufficient_data"
	})
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.Wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	// No usage reads now: what shows comes from the state file alone.
	_, addr = testbin.StartExporter(t, testbin.ExporterEnv(sim), append(common, "--no-collect.usage")...)
	var after map[string]string
	testbin.WaitFor(t, 30*time.Second, "the recommendations read back from the state file", func() bool {
		_, fams := testbin.Scrape(t, addr)
		after = rightsizingOf(fams)
		return len(after) == len(before)
	})
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if after[name] != before[name] {
			t.Errorf("%s: %q before the restart, %q after", name, before[name], after[name])
		}
	}
}

// TestRightsizingSimulateDemo: the demo alone (--simulate, its usage read
// every minute here so that several reads fit in the test) shows the
// oversized and the undersized service's findings within minutes, priced
// with the example file; and they stay, read after read, rather than fade to
// insufficient_data while the coverage waits for the next read's buckets.
func TestRightsizingSimulateDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the exporter")
	}
	t.Parallel()
	_, url := testbin.StartExporter(t, nil, "--simulate", "--simulate.listen-address="+testbin.FreeAddr(t), "--collect.usage.interval=1m")
	want := map[string]string{
		"orders-db": "over_provisioned 1000/4 saving 0.09",
		"search-ai": "under_provisioned 2000/8 saving -0.09",
	}
	var got map[string]string
	var fams map[string]*dto.MetricFamily
	defer func() {
		if t.Failed() {
			t.Logf("last findings: %v; services: %v", got, serviceNames(fams))
		}
	}()
	shown := func() bool {
		_, fams = testbin.Scrape(t, url)
		got = rightsizingOf(fams)
		return got["orders-db"] == want["orders-db"] && got["search-ai"] == want["search-ai"]
	}
	testbin.WaitFor(t, 90*time.Second, "the demo's findings", shown)
	first := newestBucket(fams, "orders-db")
	// Two more reads, a minute apart: the findings hold at every scrape.
	testbin.WaitFor(t, 3*time.Minute, "two more usage reads", func() bool {
		if !shown() {
			t.Fatalf("findings %v with buckets %s newer than the first findings'; want %v",
				got, time.Duration(newestBucket(fams, "orders-db")-first)*time.Second, want)
		}
		return newestBucket(fams, "orders-db") >= first+2*60
	})
}

// serviceNames maps each service's id to its name.
func serviceNames(fams map[string]*dto.MetricFamily) map[string]string {
	names := map[string]string{}
	for _, m := range fams["clouddb_service_info"].GetMetric() {
		names[label(m, "service_id")] = label(m, "name")
	}
	return names
}

// newestBucket is the time (Unix seconds) of the newest usage bucket read of
// the named service's primary, 0 for none.
func newestBucket(fams map[string]*dto.MetricFamily, name string) float64 {
	for id, n := range serviceNames(fams) {
		if n == name {
			v, _ := sampleOf(fams, "clouddb_service_usage_bucket_timestamp_seconds", "service_id", id, "role", "primary")
			return v
		}
	}
	return 0
}

// TestRightsizingDeletedService: a deleted service's rightsizing series go,
// and its window with them once two complete lists of the services lack
// it: the state file saved at the exit keeps the other services' windows,
// not its.
func TestRightsizingDeletedService(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t, "--timing.delete=0s"))
	state := filepath.Join(t.TempDir(), "state.json")
	p, addr := testbin.StartExporter(t, sim.Env(), "--collect.interval=2s", "--api.rate-limit=200", "--api.rate-burst=200",
		"--rightsizing.window=1h", "--state.file="+state,
		"--collect.usage", "--collect.min-data-interval=1s", "--collect.usage.interval=2s",
		"--collect.usage.series=system_cpu_usage_millicores", "--collect.usage.series=system_memory_usage_bytes")
	const coverage = "clouddb_service_rightsizing_coverage_ratio"
	ids := map[string]string{}
	testbin.WaitFor(t, 90*time.Second, "the coverage of dev-sandbox and orders-db", func() bool {
		_, fams := testbin.Scrape(t, addr)
		for id, name := range serviceNames(fams) {
			ids[name] = id
		}
		_, sandbox := sampleOf(fams, coverage, "service_id", ids["dev-sandbox"])
		_, orders := sampleOf(fams, coverage, "service_id", ids["orders-db"])
		return sandbox && orders
	})
	gone, kept := ids["dev-sandbox"], ids["orders-db"]
	sim.APIWrite(t, "DELETE", "/projects/"+sim.Project+"/services/"+gone, ``, 202, nil)
	testbin.WaitFor(t, 30*time.Second, "the deleted service's rightsizing series gone", func() bool {
		_, fams := testbin.Scrape(t, addr)
		for _, name := range []string{coverage, "clouddb_service_rightsizing_finding"} {
			if _, ok := sampleOf(fams, name, "service_id", gone); ok {
				return false
			}
		}
		return true
	})
	// The list that first lacked it, then two more: its window is dropped.
	waitSuccesses(t, addr, "services", 3, "two more complete lists of the services")
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.Wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Sections map[string][]byte `json:"sections"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	sizes, err := rightsizing.ParseSizes(rightsizing.DefaultSizes)
	if err != nil {
		t.Fatal(err)
	}
	saved := rightsizing.NewTracker(rightsizing.Config{Window: time.Hour, MinCoverage: rightsizing.DefaultMinCoverage, Sizes: sizes}, time.Now)
	if err := saved.UnmarshalBinary(file.Sections["rightsizing"]); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{gone: false, kept: true} {
		if _, ok := saved.Recommend(sim.Project, id, pricing.Size{CPUMillis: 1000, MemoryGBs: 4}); ok != want {
			t.Errorf("window of %s in the state file: %v; want %v (%d windows saved)", id, ok, want, saved.Len())
		}
	}
}
