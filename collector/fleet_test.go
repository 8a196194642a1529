package collector

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output")

// catalog is every metric name the FleetCollector may emit: the public
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
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// testSnapshots returns two projects that together exercise every metric
// of the catalog and the edge cases: undocumented statuses, absent
// endpoint, pooler and metadata, a resource without spec, null, empty and
// set error messages, a failed part that never succeeded, no auth info.
func testSnapshots() []*fleet.Snapshot {
	a := &fleet.Snapshot{
		ProjectID: "proj-a",
		Taken:     ts("2025-03-01T12:00:00.25Z"),
		Services: []fleet.Service{
			{
				Service: apiclient.Service{
					ServiceID: "svc-1", ProjectID: "proj-a", Name: "orders", RegionCode: "eu-central-1",
					ServiceType: apiclient.ServiceTypeTimeSeries, Status: apiclient.ServiceReady,
					Created: apiclient.Time{Time: ts("2024-01-02T03:04:05.123Z")},
					Resources: []apiclient.Resource{
						{ID: "res-1", Spec: &apiclient.ResourceSpec{CPUMillis: intp(500), MemoryGBs: intp(2), VolumeType: "gp3"}},
						{ID: "res-2", Spec: &apiclient.ResourceSpec{CPUMillis: intp(2000), MemoryGBs: intp(8), VolumeType: ""}},
					},
					Metadata:         &apiclient.Metadata{Environment: apiclient.EnvironmentProd},
					Endpoint:         &apiclient.Endpoint{Host: "orders.proj-a.example.net", Port: 5432},
					ConnectionPooler: &apiclient.ConnectionPooler{Endpoint: &apiclient.Endpoint{Host: "pool.example.net", Port: 6432}},
					// Revision 2026: usage with a null value, HA, lineage, VPC endpoint.
					Metrics:     &apiclient.ServiceMetrics{MilliCPU: intp(1250), MemoryMB: intp(3072), StorageMB: nil},
					HAReplicas:  &apiclient.HAReplicas{ReplicaCount: intp(1), SyncReplicaCount: intp(0)},
					ForkedFrom:  &apiclient.ForkedFrom{ProjectID: "proj-a", ServiceID: "svc-0", IsStandby: true},
					VPCEndpoint: &apiclient.VPCEndpoint{Host: "orders.vpc.example.net", Port: 5432, VPCID: "1234567890"},
				},
				StatusSince: ts("2025-02-28T10:00:00.5Z"),
			},
			{
				Service: apiclient.Service{
					ServiceID: "svc-2", ProjectID: "proj-a", Name: "scratch", RegionCode: "us-east-1",
					ServiceType: apiclient.ServiceTypePostgres, Status: "MIGRATING", Paused: boolp(true),
					Resources: []apiclient.Resource{{ID: "res-3"}},
					Metrics:   &apiclient.ServiceMetrics{StorageMB: intp(100)},
				},
				StatusSince: ts("2025-03-01T11:59:00Z"),
			},
		},
		ReplicaSets: []fleet.ReplicaSet{
			{
				ServiceID: "svc-1",
				ReplicaSet: apiclient.ReplicaSet{
					ID: "rs-1", Name: "reports", Status: apiclient.ReplicaSetActive, Nodes: 2, CPUMillis: 1000, MemoryGBs: 4,
					Endpoint:         &apiclient.Endpoint{Host: "rs-1.example.net", Port: 5433},
					ConnectionPooler: &apiclient.ConnectionPooler{},
					Metadata:         &apiclient.Metadata{Environment: apiclient.EnvironmentDev},
				},
				StatusSince: ts("2025-02-01T00:00:00Z"),
			},
			{
				ServiceID:   "svc-1",
				ReplicaSet:  apiclient.ReplicaSet{ID: "rs-2", Name: "etl", Status: "rebuilding", Nodes: 1, CPUMillis: 250, MemoryGBs: 1},
				StatusSince: ts("2025-03-01T11:00:00.125Z"),
			},
		},
		VPCs: []apiclient.VPC{{ID: "vpc-1", Name: "main", CIDR: "10.0.0.0/16", RegionCode: "eu-central-1"}},
		Peerings: []fleet.Peering{
			{VPCID: "vpc-1", Peering: apiclient.Peering{ID: "peer-1", PeerAccountID: "111111111111", PeerRegionCode: "eu-central-1", PeerVPCID: "vpc-aaa", ProvisionedID: "pcx-1", Status: apiclient.PeeringActive}, StatusSince: ts("2025-01-01T00:00:00Z")},
			{VPCID: "vpc-1", Peering: apiclient.Peering{ID: "peer-2", PeerAccountID: "222222222222", PeerRegionCode: "us-west-2", PeerVPCID: "vpc-bbb", ProvisionedID: "pcx-2", Status: "failed", ErrorMessage: ptr("route table conflict")}, StatusSince: ts("2025-03-01T09:30:00Z")},
			{VPCID: "vpc-1", Peering: apiclient.Peering{ID: "peer-3", PeerAccountID: "333333333333", PeerRegionCode: "eu-west-1", PeerVPCID: "vpc-ccc", Status: apiclient.PeeringPending, ErrorMessage: ptr("")}, StatusSince: ts("2025-03-01T11:45:00Z")},
		},
		Auth: &apiclient.AuthInfo{
			Type: "apiKey",
			APIKeyDeprecated: &apiclient.APIKeyInfo{
				Created:     apiclient.Time{Time: ts("2024-06-01T08:00:00.75Z")},
				IssuingUser: apiclient.User{ID: "user-7", Email: "jane.doe@example.com", Name: "Jane Doe"},
				Name:        "exporter",
				Project:     apiclient.AuthProject{ID: "proj-a", Name: "Project A", PlanType: "enterprise"},
				PublicKey:   "pk-a1b2c3",
			},
		},
		Parts: []fleet.PartHealth{
			{Name: fleet.PartServices, Success: true, Duration: 1500 * time.Millisecond, LastSuccess: ts("2025-03-01T12:00:00Z")},
			{Name: fleet.PartReplicaSets, Success: false, Duration: 30 * time.Second},
			{Name: fleet.PartVPCs, Success: true, Duration: 200 * time.Millisecond, LastSuccess: ts("2025-03-01T12:00:00.1Z")},
			{Name: fleet.PartPeerings, Success: false, Duration: 250 * time.Millisecond, LastSuccess: ts("2025-03-01T11:00:00Z")},
			{Name: fleet.PartAuth, Success: true, Duration: 50 * time.Millisecond, LastSuccess: ts("2025-03-01T12:00:00.2Z")},
		},
	}
	b := &fleet.Snapshot{
		ProjectID:   "proj-b",
		ProjectName: "Project B", // as discovery names it: no auth info here
		Taken:       ts("2025-03-01T12:00:05Z"),
		Services: []fleet.Service{{
			Service: apiclient.Service{
				ServiceID: "svc-9", ProjectID: "proj-b", Name: "vectors", RegionCode: "us-east-1",
				ServiceType: apiclient.ServiceTypeVector, Status: apiclient.ServiceConfiguring,
				Created:   apiclient.Time{Time: ts("2025-03-01T11:58:00Z")},
				Resources: []apiclient.Resource{{ID: "res-9", Spec: &apiclient.ResourceSpec{CPUMillis: intp(4000), MemoryGBs: intp(16), VolumeType: "io2"}}},
				Metadata:  &apiclient.Metadata{Environment: apiclient.EnvironmentDev},
				Endpoint:  &apiclient.Endpoint{Host: "vectors.example.net", Port: 0},
			},
			StatusSince: ts("2025-03-01T11:58:30Z"),
		}},
		Parts: []fleet.PartHealth{
			{Name: fleet.PartServices, Success: true, Duration: time.Second, LastSuccess: ts("2025-03-01T12:00:04Z")},
			{Name: fleet.PartReplicaSets, Success: true, Duration: time.Second, LastSuccess: ts("2025-03-01T12:00:04Z")},
			{Name: fleet.PartVPCs, Success: true, Duration: time.Second, LastSuccess: ts("2025-03-01T12:00:04Z")},
			{Name: fleet.PartPeerings, Success: true, Duration: time.Second, LastSuccess: ts("2025-03-01T12:00:04Z")},
		},
	}
	return []*fleet.Snapshot{a, b}
}

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
			if m.GetGauge() == nil {
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
	if len(allDescs) != len(catalog) {
		t.Errorf("Describe sends %d descriptors, the catalog has %d metrics", len(allDescs), len(catalog))
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

func intp(n int64) *apiclient.Int { v := apiclient.Int(n); return &v }

func boolp(b bool) *bool { return &b }
