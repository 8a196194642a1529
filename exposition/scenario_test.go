package exposition

import (
	"bytes"
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
	"github.com/clouddb/clouddb_exporter/poller"
)

// The scenario tests run the whole pipeline — simulator, API client, poller,
// collector, exposition — on one fake clock, so that the golden files are
// exact.

type scenario struct {
	t       *testing.T
	clock   *fakeclock.Clock
	sim     *cloudsim.Sim
	url     string
	pollers []*poller.Poller
	clients map[string]*apiclient.Client
}

// newScenario serves the first revision, which the older goldens record;
// revision 2026 has its own scenario (newScenarioRev).
func newScenario(t *testing.T, timings cloudsim.Timings, projects ...string) *scenario {
	t.Helper()
	return newScenarioRev(t, cloudsim.Revision2024, timings, projects...)
}

func newScenarioRev(t *testing.T, rev string, timings cloudsim.Timings, projects ...string) *scenario {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	var creds []cloudsim.Credential
	for _, p := range projects {
		creds = append(creds, cloudsim.Credential{AccessKey: p + "-ak", SecretKey: p + "-sk", APIKey: p + "-api", ProjectID: p, Name: p + "-key"})
	}
	sim := cloudsim.New(cloudsim.Options{Credentials: creds, Timings: timings, Seed: 7, Clock: clock.Now, Revision: rev})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	s := &scenario{t: t, clock: clock, sim: sim, url: srv.URL + "/v1", clients: map[string]*apiclient.Client{}}
	for _, c := range creds {
		client, err := apiclient.New(apiclient.Config{
			BaseURL: s.url, ProjectID: c.ProjectID,
			AccessKey: apiclient.Secret(c.AccessKey), SecretKey: apiclient.Secret(c.SecretKey), APIKey: apiclient.Secret(c.APIKey),
			RateLimit: 1e6, Burst: 100,
			MaxRetries: -1, // a failure must show in one cycle, without backoff waits
		})
		if err != nil {
			t.Fatal(err)
		}
		s.clients[c.ProjectID] = client
		s.pollers = append(s.pollers, poller.New(client, poller.Options{Collect: config.Collect{MaxStaleness: 5 * time.Minute}, Now: clock.Now}))
	}
	return s
}

// poll runs one full cycle of every project and returns their snapshots.
func (s *scenario) poll() []*fleet.Snapshot {
	var snaps []*fleet.Snapshot
	for _, p := range s.pollers {
		snaps = append(snaps, p.Poll(context.Background()))
	}
	return snaps
}

func (s *scenario) golden(name string, snaps []*fleet.Snapshot, metrics ...string) {
	s.t.Helper()
	compareCollectorGolden(s.t, collectortest.NewFleetCollectorOf(snaps...), name, metrics...)
	checkRendering(s.t, snaps...)
}

func TestScenarioDemo(t *testing.T) {
	t.Parallel() // CPU-bound under -race: the package's tail, on both cores
	s := newScenario(t, cloudsim.Timings{}, "demo")
	s.sim.LoadDemo("demo")
	// The first revision sends none of what revision 2026 adds.
	var first []string
	for _, m := range familyNames() {
		if !slices.Contains(revision2026Only, m) {
			first = append(first, m)
		}
	}
	s.golden("scenario_demo.prom", s.poll(), first...)
}

// revision2026Only are the metrics of fields only revision 2026 sends.
var revision2026Only = []string{
	"clouddb_service_cpu_usage_cores", "clouddb_service_memory_usage_bytes", "clouddb_service_storage_usage_bytes",
	"clouddb_service_ha_replicas", "clouddb_service_ha_sync_replicas", "clouddb_service_fork_info", "clouddb_service_vpc_endpoint_info",
}

// TestScenarioRevision2026 records what revision 2026 adds: usage, HA
// replicas, a shared-resource service (no cpu/memory series), a fork's
// lineage, a VPC endpoint, a paused service without the paused field, and
// the project's name.
func TestScenarioRevision2026(t *testing.T) {
	t.Parallel() // CPU-bound under -race: the package's tail, on both cores
	s := newScenarioRev(t, cloudsim.Revision2026, cloudsim.Timings{}, "demo")
	s.sim.LoadDemo("demo")
	s.clock.Advance(3 * time.Hour)
	snap := s.poll()[0]
	if err := s.clients["demo"].AttachToVPC(context.Background(), snap.Services[1].ServiceID,
		apiclient.VPCAttachmentRequest{VPCID: snap.VPCs[0].ID}); err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(time.Minute)
	s.golden("scenario_revision2026.prom", s.poll(),
		"clouddb_service_paused", "clouddb_service_shared_resources", "clouddb_service_cpu_cores", "clouddb_service_memory_bytes",
		"clouddb_service_cpu_usage_cores", "clouddb_service_memory_usage_bytes", "clouddb_service_storage_usage_bytes",
		"clouddb_service_ha_replicas", "clouddb_service_ha_sync_replicas", "clouddb_service_fork_info",
		"clouddb_service_vpc_endpoint_info", "clouddb_project_info", "clouddb_api_key_info", "clouddb_replica_set_info")
}

// TestScenarioUnusualValues covers what a drifting control plane sends:
// statuses the spec does not list, a service without endpoint (QUEUED),
// services and replica sets without pooler, null and set error messages.
func TestScenarioUnusualValues(t *testing.T) {
	t.Parallel() // CPU-bound under -race: the package's tail, on both cores
	s := newScenario(t, cloudsim.Timings{Provision: time.Hour}, "p")
	s.sim.LoadFleet("p", cloudsim.Fleet{Services: 2, ReplicaSetsPerService: 1, VPCs: 1, PeeringsPerVPC: 2})
	client := s.clients["p"]
	ctx := context.Background()
	queued, err := client.CreateService(ctx, apiclient.CreateServiceRequest{Name: "fresh", Addons: []string{}, RegionCode: "eu-west-1", CPUMillis: apiclient.SizeOf(500), MemoryGBs: apiclient.SizeOf(2)})
	if err != nil {
		t.Fatal(err)
	}
	snap := s.poll()[0]
	svc, rs, peering := snap.Services[0], snap.ReplicaSets[0], snap.Peerings[0]
	for _, err := range []error{
		s.sim.SetServiceStatus("p", svc.ServiceID, "MIGRATING"),
		s.sim.SetReplicaSetStatus("p", rs.ServiceID, rs.ID, "rebuilding"),
		s.sim.SetPeeringStatus("p", peering.VPCID, peering.ID, "failed"),
		s.sim.SetPeeringError("p", peering.VPCID, peering.ID, new("peer VPC not found")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	s.clock.Advance(time.Minute)
	snaps := s.poll()
	var queuedSeen bool
	for _, svc := range snaps[0].Services {
		if svc.ServiceID == queued.ServiceID {
			queuedSeen = svc.Endpoint == nil && svc.Status == apiclient.ServiceQueued
		}
	}
	if !queuedSeen {
		t.Fatalf("the new service is not QUEUED without an endpoint: %+v", snaps[0].Services)
	}
	s.golden("scenario_unusual.prom", snaps,
		"clouddb_service_info", "clouddb_service_status", "clouddb_service_status_changed_timestamp_seconds",
		"clouddb_service_connection_pooler_enabled", "clouddb_replica_set_status", "clouddb_replica_set_info",
		"clouddb_vpc_peering_status", "clouddb_vpc_peering_error", "clouddb_vpc_peering_error_info", "clouddb_vpc_peering_status_changed_timestamp_seconds")
}

// TestScenarioDeletedAndStale: a deleted service and its replica sets
// disappear; a part that starts failing keeps its data, then loses it once
// it is older than max-staleness.
func TestScenarioDeletedAndStale(t *testing.T) {
	t.Parallel() // CPU-bound under -race: the package's tail, on both cores
	s := newScenario(t, cloudsim.Timings{}, "p")
	s.sim.LoadFleet("p", cloudsim.Fleet{Services: 3, ReplicaSetsPerService: 1, VPCs: 1, PeeringsPerVPC: 1})
	first := s.poll()[0]
	if err := s.clients["p"].DeleteService(context.Background(), first.Services[0].ServiceID); err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(time.Minute)
	s.golden("scenario_deleted.prom", s.poll(), "clouddb_service_info", "clouddb_replica_set_info")

	s.sim.AddFault(cloudsim.Fault{Operation: apiclient.OpListPeerings, Status: 500})
	s.clock.Advance(time.Minute)
	s.golden("scenario_failing_kept.prom", s.poll(),
		"clouddb_vpc_peering_info", "clouddb_exporter_collector_success", "clouddb_exporter_collector_last_success_timestamp_seconds")
	s.clock.Advance(5 * time.Minute)
	snaps := s.poll()
	if len(snaps[0].Peerings) != 0 {
		t.Fatalf("peerings kept past max-staleness: %+v", snaps[0].Peerings)
	}
	s.golden("scenario_failing_dropped.prom", snaps,
		"clouddb_vpc_info", "clouddb_exporter_collector_success", "clouddb_exporter_collector_last_success_timestamp_seconds")
}

func TestScenarioTwoProjects(t *testing.T) {
	t.Parallel() // CPU-bound under -race: the package's tail, on both cores
	s := newScenario(t, cloudsim.Timings{}, "alpha", "beta")
	s.sim.LoadDemo("alpha")
	s.sim.LoadFleet("beta", cloudsim.Fleet{Services: 2, ReplicaSetsPerService: 1, VPCs: 1, PeeringsPerVPC: 1})
	s.golden("scenario_two_projects.prom", s.poll(),
		"clouddb_service_status", "clouddb_replica_set_nodes", "clouddb_vpc_info", "clouddb_api_key_info",
		"clouddb_exporter_collector_success")
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

// familyNames returns the name of every metric family of the state and of the
// data-plane parts named: a reader the fixtures do not fill is tested in its own package.
func familyNames(parts ...string) []string {
	var names []string
	for _, d := range collector.Families() {
		if d.Part() == "" || slices.Contains(parts, d.Part()) {
			names = append(names, d.Name())
		}
	}
	return names
}
