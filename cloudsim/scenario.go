package cloudsim

import (
	"fmt"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// demoLongTransition ignores Timings, so that a demo always shows it.
const demoLongTransition = 30 * time.Minute

type demoService struct {
	name, region string
	addons       []string
	cpu, mem     int64
	env          string
	ha           int
	pooler       bool
	// CONFIGURING means a long transition that ends in READY.
	status      string
	replicaSets []demoReplicaSet
	vpc         string
	usage       loadCurve
}

type demoReplicaSet struct {
	name            string
	nodes, cpu, mem int64
	pooler          bool
}

// LoadDemo adds the demo scenario to a project: every service type, a
// PAUSED and a long CONFIGURING one, nothing UNSTABLE. Ids depend only on
// the seed and the project id.
func (s *Sim) LoadDemo(projectID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rng := newRand(s.seed, "demo/"+projectID)
	now := s.clock()
	p := s.project(projectID)

	vpcs := map[string]*vpc{}
	for _, v := range []struct{ name, cidr, region string }{
		{"prod-vpc", "10.10.0.0/16", "us-east-1"},
		{"analytics-vpc", "10.20.0.0/16", "eu-west-1"},
	} {
		vpcs[v.name] = s.newVPC(p, rng, v.name, v.cidr, v.region)
	}
	s.newPeering(vpcs["prod-vpc"], rng, "123456789012", "us-east-1", "vpc-0a1b2c3d4e5f60718")
	pending := s.newPeering(vpcs["prod-vpc"], rng, "210987654321", "us-west-2", "vpc-0f1e2d3c4b5a69788")
	pending.life.begin(now, apiclient.PeeringActive, step{apiclient.PeeringPending, demoLongTransition})
	broken := s.newPeering(vpcs["analytics-vpc"], rng, "345678901234", "eu-central-1", "vpc-07a8b9c0d1e2f3a4b")
	msg := "route propagation failed: route table quota exceeded in the peer account"
	broken.errorMessage = &msg

	ts, ai := apiclient.AddonTimeSeries, apiclient.AddonAI
	prod, dev := apiclient.EnvironmentProd, apiclient.EnvironmentDev
	ready := apiclient.ServiceReady
	demo := []demoService{
		{name: "metrics-prod", region: "us-east-1", addons: []string{ts}, cpu: 4000, mem: 16, env: prod, ha: 1, pooler: true,
			status: ready, vpc: "prod-vpc", replicaSets: []demoReplicaSet{
				{name: "metrics-read", nodes: 2, cpu: 2000, mem: 8, pooler: true},
				{name: "metrics-analytics", nodes: 1, cpu: 1000, mem: 4},
			}},
		// Oversized: a 2000/8 barely loaded.
		{name: "orders-db", region: "us-east-1", cpu: 2000, mem: 8, env: prod, status: ready, usage: idleLoad,
			replicaSets: []demoReplicaSet{{name: "orders-read", nodes: 1, cpu: 2000, mem: 8}}},
		{name: "embeddings", region: "eu-west-1", addons: []string{ai}, cpu: 2000, mem: 8, env: prod, status: ready},
		{name: "dev-sandbox", region: "eu-west-1", cpu: 500, mem: 2, env: dev, status: ready},
		{name: "legacy-reports", region: "us-east-1", cpu: 1000, mem: 4, env: prod, status: apiclient.ServicePaused},
		{name: "events-migration", region: "eu-west-1", addons: []string{ts, ai}, cpu: 8000, mem: 32, env: prod,
			status: apiclient.ServiceConfiguring},
		// Undersized: a 1000/4 near its size all day.
		{name: "search-ai", region: "us-west-2", addons: []string{ai}, cpu: 1000, mem: 4, env: prod, status: ready, usage: busyLoad},
	}
	for i, d := range demo {
		created := now.UTC().Add(-time.Duration(len(demo)-i) * 24 * time.Hour).
			Add(-time.Duration(rng.IntN(86400_000_000)) * time.Microsecond).Truncate(time.Microsecond)
		svc := s.newService(p, rng, d.name, d.region, serviceType(d.addons), d.cpu, d.mem, creationTime(created))
		svc.environment = d.env
		svc.pooler = d.pooler
		svc.curve = d.usage
		s.setReplicaCount(svc, rng, d.ha)
		switch d.status {
		case apiclient.ServiceConfiguring:
			svc.life.begin(now, ready, step{apiclient.ServiceConfiguring, demoLongTransition})
		default:
			svc.life = settle(d.status)
		}
		if d.vpc != "" {
			svc.vpcID = vpcs[d.vpc].id
		}
		for _, r := range d.replicaSets {
			rs := s.newReplicaSet(svc, rng, r.name, r.nodes, r.cpu, r.mem)
			rs.pooler = r.pooler
		}
	}
	if s.rev == Revision2024 {
		return
	}
	parent := p.services[p.serviceOrder[0]]
	fork := s.newService(p, rng, "metrics-prod-fork", parent.region, parent.serviceType, parent.cpuMillis, parent.memoryGBs,
		creationTime(now.UTC().Add(-2*time.Hour)))
	fork.environment = dev
	fork.forkedFrom = &apiclient.ForkedFrom{ProjectID: p.id, ServiceID: parent.id}
	free := s.newService(p, rng, "free-tier", "us-east-1", apiclient.ServiceTypePostgres, 0, 0, creationTime(now.UTC().Add(-time.Hour)))
	free.shared, free.environment = true, dev
}

// Fleet sizes a generated fleet for load tests.
type Fleet struct {
	Services, ReplicaSetsPerService, VPCs, PeeringsPerVPC int
}

// LoadFleet adds a generated fleet, every resource settled; ids depend only
// on the seed and the project id.
func (s *Sim) LoadFleet(projectID string, f Fleet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rng := newRand(s.seed, "fleet/"+projectID)
	now := s.clock()
	p := s.project(projectID)

	regions := []string{"us-east-1", "eu-west-1", "us-west-2", "ap-southeast-1"}
	addons := [][]string{{apiclient.AddonTimeSeries}, nil, {apiclient.AddonAI}, {apiclient.AddonTimeSeries, apiclient.AddonAI}}
	cpus := []int64{500, 1000, 2000, 4000, 8000}

	for v := range max(f.VPCs, 0) {
		vp := s.newVPC(p, rng, fmt.Sprintf("fleet-vpc-%04d", v), fmt.Sprintf("10.%d.%d.0/24", v/256%256, v%256),
			regions[v%len(regions)])
		for range max(f.PeeringsPerVPC, 0) {
			s.newPeering(vp, rng, fmt.Sprintf("%012d", rng.Int64N(1e12)), regions[rng.IntN(len(regions))],
				"vpc-"+s.newID(rng))
		}
	}
	p.services = growMap(p.services, f.Services)
	for i := range max(f.Services, 0) {
		cpu := cpus[i%len(cpus)]
		created := creationTime(now.Add(-time.Duration(i+1) * time.Minute).Add(time.Duration(rng.IntN(60_000_000)) * time.Microsecond))
		svc := s.newService(p, rng, fmt.Sprintf("fleet-%05d", i), regions[i%len(regions)],
			serviceType(addons[i%len(addons)]), cpu, cpu/250, created)
		if i%4 == 3 {
			svc.environment = apiclient.EnvironmentDev
		}
		svc.pooler = i%5 == 0
		if i%7 == 0 {
			s.setReplicaCount(svc, rng, 1)
		}
		for j := range max(f.ReplicaSetsPerService, 0) {
			rs := s.newReplicaSet(svc, rng, fmt.Sprintf("fleet-%05d-read-%d", i, j), int64(1+j%3), cpu, cpu/250)
			rs.pooler = j == 0 && i%2 == 0
		}
	}
}

func growMap[V any](m map[string]V, n int) map[string]V {
	if n <= 0 {
		return m
	}
	grown := make(map[string]V, len(m)+n)
	for k, v := range m {
		grown[k] = v
	}
	return grown
}
