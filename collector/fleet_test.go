package collector

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output")

// catalog is every metric name of the state the FleetCollector may emit (the
// data plane's register from dataplane/, not linked here): the public
// interface, kept in step with docs/metrics.md.
var catalog = []string{
	"clouddb_service_info",
	"clouddb_service_status",
	"clouddb_service_paused",
	"clouddb_service_created_timestamp_seconds",
	"clouddb_service_status_changed_timestamp_seconds",
	"clouddb_service_resources",
	"clouddb_service_cpu_cores",
	"clouddb_service_memory_bytes",
	"clouddb_service_volume_info",
	"clouddb_service_connection_pooler_enabled",
	"clouddb_service_shared_resources",
	"clouddb_service_cpu_usage_cores",
	"clouddb_service_memory_usage_bytes",
	"clouddb_service_storage_usage_bytes",
	"clouddb_service_ha_replicas",
	"clouddb_service_ha_sync_replicas",
	"clouddb_service_fork_info",
	"clouddb_service_vpc_endpoint_info",
	"clouddb_project_info",
	"clouddb_replica_set_info",
	"clouddb_replica_set_status",
	"clouddb_replica_set_status_changed_timestamp_seconds",
	"clouddb_replica_set_nodes",
	"clouddb_replica_set_cpu_cores",
	"clouddb_replica_set_memory_bytes",
	"clouddb_replica_set_connection_pooler_enabled",
	"clouddb_vpc_info",
	"clouddb_vpc_peering_info",
	"clouddb_vpc_peering_status",
	"clouddb_vpc_peering_status_changed_timestamp_seconds",
	"clouddb_vpc_peering_error",
	"clouddb_vpc_peering_error_info",
	"clouddb_api_key_info",
	"clouddb_api_key_created_timestamp_seconds",
	"clouddb_exporter_collector_success",
	"clouddb_exporter_collector_duration_seconds",
	"clouddb_exporter_collector_last_success_timestamp_seconds",
	"clouddb_exporter_snapshot_timestamp_seconds",
	"clouddb_up",
	"clouddb_project_down_cause",
	"clouddb_api_clock_skew_seconds",
	// The opt-in usage collector.
	// The opt-in log collector.
}

// testSnapshots returns the fixture that exercises every metric of the
// catalog and its edge cases (fleettest.Snapshots).
func testSnapshots() []*fleet.Snapshot { return fleettest.Snapshots() }

// goldenPath returns the path of a golden file.
func goldenPath(name string) string { return filepath.Join("testdata", name) }

// readGolden returns a golden file, first rewriting it with got when the
// test runs with -update.
func readGolden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	path := goldenPath(name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./collector -update to create it)", err)
	}
	return want
}

// compareCollectorGolden compares the named metrics of c with a golden
// exposition file through testutil.CollectAndCompare.
func compareCollectorGolden(t *testing.T, c prometheus.Collector, name string, metrics ...string) {
	t.Helper()
	if len(metrics) == 0 {
		t.Fatal("no metric named: CollectAndCompare would compare nothing")
	}
	c = fleettest.Pinned(c)
	got, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, metrics...)
	if err != nil {
		t.Fatal(err)
	}
	want := readGolden(t, name, got)
	if err := testutil.CollectAndCompare(c, bytes.NewReader(want), metrics...); err != nil {
		t.Error(err)
	}
	// CollectAndCompare ignores a name that is in neither; the golden file
	// must really hold every metric named.
	for _, m := range metrics {
		if !bytes.Contains(want, []byte("\n"+m+"{")) && !bytes.HasPrefix(want, []byte(m+"{")) {
			t.Errorf("golden file %s has no sample of %s", name, m)
		}
	}
}

func TestFleetCollectorCatalog(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewFleetCollectorOf(testSnapshots()...))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, mf.GetName())
		for _, m := range mf.GetMetric() {
			if m.GetGauge() == nil && !strings.HasSuffix(mf.GetName(), "_total") {
				t.Errorf("%s is not a gauge", mf.GetName())
			}
			if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
				return l.GetName() == "project_id" && l.GetValue() != ""
			}) {
				t.Errorf("%s has a series without project_id", mf.GetName())
			}
		}
	}
	want := slices.Clone(catalog)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("families = %v\nwant the catalog %v", got, want)
	}
	if len(allDescs()) != len(catalog) {
		t.Errorf("Describe sends %d descriptors, the catalog has %d metrics", len(allDescs()), len(catalog))
	}
}

func TestFleetCollectorLint(t *testing.T) {
	problems, err := testutil.CollectAndLint(NewFleetCollectorOf(testSnapshots()...))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestFleetCollectorSource(t *testing.T) {
	snaps := testSnapshots()
	var current []*fleet.Snapshot
	c := NewFleetCollector(func() []*fleet.Snapshot { return current })
	if n := testutil.CollectAndCount(c, "clouddb_service_info"); n != 0 {
		t.Errorf("no snapshot: %d clouddb_service_info series, want 0", n)
	}
	current = []*fleet.Snapshot{snaps[0], nil}
	if n := testutil.CollectAndCount(c, "clouddb_service_info"); n != 2 {
		t.Errorf("proj-a and a nil snapshot: %d clouddb_service_info series, want 2", n)
	}
	current = snaps
	if n := testutil.CollectAndCount(c, "clouddb_service_info"); n != 3 {
		t.Errorf("both projects: %d clouddb_service_info series, want 3", n)
	}
}
