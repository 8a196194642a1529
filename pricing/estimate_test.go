package pricing

import (
	"math"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// testTable's storage is 73 a GB and month: 1024 MB cost 0.1 an hour.
const testTable = `currency: EUR
effective_date: 2026-11-01
compute:
  us-east-1: {"500/2": 0.045, "1000/4": 0.09, "2000/8": 0.18}
storage_gb_month: {us-east-1: 73}
ha_replica: 0.5
pooler: 0.01
`

func mustParse(t testing.TB, s string) *Table {
	t.Helper()
	tbl, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func service(id, region string, cpu, mem int64, mutate ...func(*apiclient.Service)) fleet.Service {
	s := &apiclient.Service{ServiceID: id, RegionCode: region, Status: apiclient.ServiceReady,
		Resources: []apiclient.Resource{{ID: id + "-r0", Spec: &apiclient.ResourceSpec{CPUMillis: fleettest.Int(cpu), MemoryGBs: fleettest.Int(mem)}}}}
	for _, m := range mutate {
		m(s)
	}
	return fleet.Service{Service: s}
}

func storage(mb int64) func(*apiclient.Service) {
	return func(s *apiclient.Service) { s.Metrics = &apiclient.ServiceMetrics{StorageMB: fleettest.Int(mb)} }
}

func withPooler(s *apiclient.Service) { s.ConnectionPooler = &apiclient.ConnectionPooler{} }

func replicaSet(service, id string, nodes, cpu, mem int64, pooler bool) fleet.ReplicaSet {
	r := &apiclient.ReplicaSet{ID: id, Nodes: apiclient.Int(nodes), CPUMillis: apiclient.Int(cpu), MemoryGBs: apiclient.Int(mem)}
	if pooler {
		r.ConnectionPooler = &apiclient.ConnectionPooler{}
	}
	return fleet.ReplicaSet{ServiceID: service, ReplicaSet: r}
}

// estimateSnapshot holds a service of every kind the estimate tells apart.
func estimateSnapshot() *fleet.Snapshot {
	return &fleet.Snapshot{
		ProjectID: "p1",
		Services: []fleet.Service{
			service("a-plain", "us-east-1", 1000, 4, storage(2048)),
			service("b-ha", "us-east-1", 2000, 8, withPooler, func(s *apiclient.Service) {
				s.HAReplicas = &apiclient.HAReplicas{ReplicaCount: fleettest.Int(2), SyncReplicaCount: fleettest.Int(1)}
			}),
			service("c-replica-sets", "us-east-1", 500, 2, storage(0)),
			service("d-paused", "us-east-1", 4000, 16, storage(1024), withPooler, func(s *apiclient.Service) { s.Status = apiclient.ServicePaused }),
			service("e-shared", "us-east-1", 0, 0, storage(512), func(s *apiclient.Service) {
				s.Resources[0].Spec.CPUMillis, s.Resources[0].Spec.MemoryGBs = nil, nil
			}),
			service("f-elsewhere", "eu-west-1", 1000, 4, withPooler, func(s *apiclient.Service) {
				s.Resources = append(s.Resources, apiclient.Resource{ID: s.ServiceID + "-r1", Spec: s.Resources[0].Spec})
			}),
			service("g-first-revision-ha", "us-east-1", 1000, 4, storage(1024), func(s *apiclient.Service) {
				s.Resources = append(s.Resources, apiclient.Resource{ID: s.ServiceID + "-r1", Spec: s.Resources[0].Spec})
			}),
		},
		ReplicaSets: []fleet.ReplicaSet{
			replicaSet("c-replica-sets", "rs1", 2, 1000, 4, true),
			replicaSet("c-replica-sets", "rs2", 1, 500, 2, false),
			replicaSet("d-paused", "rs3", 3, 1000, 4, true),
			replicaSet("f-elsewhere", "rs4", 1, 1000, 4, false),
		},
	}
}

// TestEstimate: the exact cost of each component for services of every
// kind; a component without a price has no value and is counted.
func TestEstimate(t *testing.T) {
	const none = -1.0
	want := map[string][5]float64{ // compute, ha, read_replicas, storage, pooler
		"a-plain":             {0.09, 0, 0, 0.2, 0},
		"b-ha":                {0.18, 2 * 0.5 * 0.18, 0, none, 0.01},
		"c-replica-sets":      {0.045, 0, 2*0.09 + 0.045, 0, 0.01},
		"d-paused":            {0, 0, 0, 0.1, 0},
		"e-shared":            {0, 0, 0, 0.05, 0},
		"f-elsewhere":         {none, none, none, none, 0.01}, // the pooler's price has no region
		"g-first-revision-ha": {0.09, 0.5 * 0.09, 0, 0.1, 0},
	}
	costs := Estimate(mustParse(t, testTable), estimateSnapshot())
	if len(costs.Services) != len(want) {
		t.Fatalf("%d services priced, want %d", len(costs.Services), len(want))
	}
	for _, c := range costs.Services {
		for i, component := range Components {
			w, priced := want[c.ID][i], c.Priced&(1<<i) != 0
			switch {
			case w == none && priced:
				t.Errorf("%s %s = %v; want no price", c.ID, component, c.PerHour[i])
			case w != none && !priced:
				t.Errorf("%s %s has no price; want %v", c.ID, component, w)
			case w != none && math.Abs(c.PerHour[i]-w) > 1e-12:
				t.Errorf("%s %s = %v; want %v", c.ID, component, c.PerHour[i], w)
			}
		}
	}
	// b-ha's storage; f-elsewhere's compute, HA, storage and replica set.
	if costs.Unpriced != 5 {
		t.Errorf("unpriced %d; want 5", costs.Unpriced)
	}
}
