// Package fleettest holds the fleet snapshots the collector and exposition
// tests share: a pair of projects that exercises every metric of the state
// (internal/dataplanetest adds the data plane's), and
// synthetic projects of any size for benchmarks.
package fleettest

import (
	"fmt"
	"strconv"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// Time parses an RFC 3339 time, panicking on a bad one.
func Time(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// Int returns a pointer to an apiclient.Int.
func Int(n int64) *apiclient.Int { v := apiclient.Int(n); return &v }

// Bool returns a pointer to b.
func Bool(b bool) *bool { return &b }

// Snapshots returns two projects that together exercise every metric
// of the catalog and the edge cases: undocumented statuses, absent
// endpoint, pooler and metadata, a resource without spec, null, empty and
// set error messages, a failed part that never succeeded, no auth info.
func Snapshots() []*fleet.Snapshot { return []*fleet.Snapshot{projectA(), projectB()} }

func projectA() *fleet.Snapshot {
	return &fleet.Snapshot{
		ProjectID:   "proj-a",
		Taken:       Time("2025-03-01T12:00:00.25Z"),
		Read:        Time("2025-03-01T12:00:00.2Z"),
		Services:    servicesA(),
		ReplicaSets: replicaSetsA(),
		VPCs:        []apiclient.VPC{{ID: "vpc-1", Name: "main", CIDR: "10.0.0.0/16", RegionCode: "eu-central-1"}},
		Peerings: []fleet.Peering{
			{VPCID: "vpc-1", Peering: &apiclient.Peering{ID: "peer-1", PeerAccountID: "111111111111", PeerRegionCode: "eu-central-1", PeerVPCID: "vpc-aaa", ProvisionedID: "pcx-1", Status: apiclient.PeeringActive}, StatusSince: Time("2025-01-01T00:00:00Z")},
			{VPCID: "vpc-1", Peering: &apiclient.Peering{ID: "peer-2", PeerAccountID: "222222222222", PeerRegionCode: "us-west-2", PeerVPCID: "vpc-bbb", ProvisionedID: "pcx-2", Status: "failed", ErrorMessage: Ptr("route table conflict")}, StatusSince: Time("2025-03-01T09:30:00Z")},
			{VPCID: "vpc-1", Peering: &apiclient.Peering{ID: "peer-3", PeerAccountID: "333333333333", PeerRegionCode: "eu-west-1", PeerVPCID: "vpc-ccc", Status: apiclient.PeeringPending, ErrorMessage: Ptr("")}, StatusSince: Time("2025-03-01T11:45:00Z")},
		},
		Auth: &apiclient.AuthInfo{
			Type: "apiKey",
			APIKeyDeprecated: &apiclient.APIKeyInfo{
				Created:     apiclient.Time{Time: Time("2024-06-01T08:00:00.75Z")},
				IssuingUser: apiclient.User{ID: "user-7", Email: "jane.doe@example.com", Name: "Jane Doe"},
				Name:        "exporter",
				Project:     apiclient.AuthProject{ID: "proj-a", Name: "Project A", PlanType: "enterprise"},
				PublicKey:   "pk-a1b2c3",
			},
		},
		Parts: []fleet.PartHealth{
			{Name: fleet.PartServices, Success: true, Duration: 1500 * time.Millisecond, LastSuccess: Time("2025-03-01T12:00:00Z")},
			{Name: fleet.PartReplicaSets, Success: false, Duration: 30 * time.Second},
			{Name: fleet.PartVPCs, Success: true, Duration: 200 * time.Millisecond, LastSuccess: Time("2025-03-01T12:00:00.1Z")},
			{Name: fleet.PartPeerings, Success: false, Duration: 250 * time.Millisecond, LastSuccess: Time("2025-03-01T11:00:00Z")},
			{Name: fleet.PartAuth, Success: true, Duration: 50 * time.Millisecond, LastSuccess: Time("2025-03-01T12:00:00.2Z")},
			{Name: "usage", Success: false, Duration: 4 * time.Second, LastSuccess: Time("2025-03-01T11:55:00Z")},
			{Name: "logs", Success: true, Duration: 300 * time.Millisecond, LastSuccess: Time("2025-03-01T11:59:00Z")},
		},
		Access:    fleet.Access{Known: true, Up: true},
		ClockSkew: -3 * time.Second, ClockSkewKnown: true,
	}
}

func servicesA() []fleet.Service {
	return []fleet.Service{
		{
			Service: &apiclient.Service{
				ServiceID: "svc-1", ProjectID: "proj-a", Name: "orders", RegionCode: "eu-central-1",
				ServiceType: apiclient.ServiceTypeTimeSeries, Status: apiclient.ServiceReady,
				Created: apiclient.Time{Time: Time("2024-01-02T03:04:05.123Z")},
				Resources: []apiclient.Resource{
					{ID: "res-1", Spec: &apiclient.ResourceSpec{CPUMillis: Int(500), MemoryGBs: Int(2), VolumeType: "gp3"}},
					{ID: "res-2", Spec: &apiclient.ResourceSpec{CPUMillis: Int(2000), MemoryGBs: Int(8), VolumeType: ""}},
				},
				Metadata:         &apiclient.Metadata{Environment: apiclient.EnvironmentProd},
				Endpoint:         &apiclient.Endpoint{Host: "orders.proj-a.example.net", Port: 5432},
				ConnectionPooler: &apiclient.ConnectionPooler{Endpoint: &apiclient.Endpoint{Host: "pool.example.net", Port: 6432}},
				// Revision 2026: usage with a null value, HA, lineage, VPC endpoint.
				Metrics:     &apiclient.ServiceMetrics{MilliCPU: Int(1250), MemoryMB: Int(3072), StorageMB: nil},
				HAReplicas:  &apiclient.HAReplicas{ReplicaCount: Int(1), SyncReplicaCount: Int(0)},
				ForkedFrom:  &apiclient.ForkedFrom{ProjectID: "proj-a", ServiceID: "svc-0", IsStandby: true},
				VPCEndpoint: &apiclient.VPCEndpoint{Host: "orders.vpc.example.net", Port: 5432, VPCID: "1234567890"},
			},
			StatusSince: Time("2025-02-28T10:00:00.5Z"),
		},
		{
			Service: &apiclient.Service{
				ServiceID: "svc-2", ProjectID: "proj-a", Name: "scratch", RegionCode: "us-east-1",
				ServiceType: apiclient.ServiceTypePostgres, Status: "MIGRATING", Paused: Bool(true),
				Resources: []apiclient.Resource{{ID: "res-3"}},
				Metrics:   &apiclient.ServiceMetrics{StorageMB: Int(100)},
			},
			StatusSince: Time("2025-03-01T11:59:00Z"),
		},
	}
}

func replicaSetsA() []fleet.ReplicaSet {
	return []fleet.ReplicaSet{
		{
			ServiceID: "svc-1",
			ReplicaSet: &apiclient.ReplicaSet{
				ID: "rs-1", Name: "reports", Status: apiclient.ReplicaSetActive, Nodes: 2, CPUMillis: 1000, MemoryGBs: 4,
				Endpoint:         &apiclient.Endpoint{Host: "rs-1.example.net", Port: 5433},
				ConnectionPooler: &apiclient.ConnectionPooler{},
				Metadata:         &apiclient.Metadata{Environment: apiclient.EnvironmentDev},
			},
			StatusSince: Time("2025-02-01T00:00:00Z"),
		},
		{
			ServiceID:   "svc-1",
			ReplicaSet:  &apiclient.ReplicaSet{ID: "rs-2", Name: "etl", Status: "rebuilding", Nodes: 1, CPUMillis: 250, MemoryGBs: 1},
			StatusSince: Time("2025-03-01T11:00:00.125Z"),
		},
	}
}

func projectB() *fleet.Snapshot {
	return &fleet.Snapshot{
		ProjectID:   "proj-b",
		ProjectName: "Project B", // as discovery names it: no auth info here
		Taken:       Time("2025-03-01T12:00:05Z"),
		Read:        Time("2025-03-01T12:00:04Z"),
		Services: []fleet.Service{{
			Service: &apiclient.Service{
				ServiceID: "svc-9", ProjectID: "proj-b", Name: "vectors", RegionCode: "us-east-1",
				ServiceType: apiclient.ServiceTypeVector, Status: apiclient.ServiceConfiguring,
				Created:   apiclient.Time{Time: Time("2025-03-01T11:58:00Z")},
				Resources: []apiclient.Resource{{ID: "res-9", Spec: &apiclient.ResourceSpec{CPUMillis: Int(4000), MemoryGBs: Int(16), VolumeType: "io2"}}},
				Metadata:  &apiclient.Metadata{Environment: apiclient.EnvironmentDev},
				Endpoint:  &apiclient.Endpoint{Host: "vectors.example.net", Port: 0},
			},
			StatusSince: Time("2025-03-01T11:58:30Z"),
		}},
		Access: fleet.Access{Known: true, Up: true},
		Parts: []fleet.PartHealth{
			{Name: fleet.PartServices, Success: true, Duration: time.Second, LastSuccess: Time("2025-03-01T12:00:04Z")},
			{Name: fleet.PartReplicaSets, Success: true, Duration: time.Second, LastSuccess: Time("2025-03-01T12:00:04Z")},
			{Name: fleet.PartVPCs, Success: true, Duration: time.Second, LastSuccess: Time("2025-03-01T12:00:04Z")},
			{Name: fleet.PartPeerings, Success: true, Duration: time.Second, LastSuccess: Time("2025-03-01T12:00:04Z")},
		},
	}
}

// Synthetic returns a project with n services, each with one resource and
// two replica sets, and a VPC with two peerings per ten services.
func Synthetic(projectID string, n int) *fleet.Snapshot {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &fleet.Snapshot{ProjectID: projectID, Taken: now, Read: now}
	for i := range n {
		id := fmt.Sprintf("svc-%06d", i)
		s.Services = append(s.Services, fleet.Service{
			Service: &apiclient.Service{
				ServiceID: id, ProjectID: projectID, Name: "service-" + strconv.Itoa(i), RegionCode: "eu-central-1",
				ServiceType: apiclient.ServiceTypeTimeSeries, Status: apiclient.ServiceStatuses[i%len(apiclient.ServiceStatuses)],
				Created:   apiclient.Time{Time: now.Add(-time.Duration(i) * time.Hour)},
				Resources: []apiclient.Resource{{ID: "res-" + id, Spec: &apiclient.ResourceSpec{CPUMillis: Int(2000), MemoryGBs: Int(8), VolumeType: "gp3"}}},
				Metadata:  &apiclient.Metadata{Environment: apiclient.EnvironmentProd},
				Endpoint:  &apiclient.Endpoint{Host: id + ".example.net", Port: 5432},
			},
			StatusSince: now.Add(-time.Minute),
		})
		for r := range 2 {
			s.ReplicaSets = append(s.ReplicaSets, fleet.ReplicaSet{
				ServiceID: id,
				ReplicaSet: &apiclient.ReplicaSet{
					ID: fmt.Sprintf("rs-%06d-%d", i, r), Name: "replica-" + strconv.Itoa(r), Status: apiclient.ReplicaSetActive,
					Nodes: 2, CPUMillis: 1000, MemoryGBs: 4,
					Endpoint: &apiclient.Endpoint{Host: id + "-rs.example.net", Port: 5433},
				},
				StatusSince: now.Add(-time.Hour),
			})
		}
		if i%10 == 0 {
			vpc := fmt.Sprintf("vpc-%06d", i/10)
			s.VPCs = append(s.VPCs, apiclient.VPC{ID: vpc, Name: "net-" + vpc, CIDR: "10.0.0.0/16", RegionCode: "eu-central-1"})
			for p := range 2 {
				s.Peerings = append(s.Peerings, fleet.Peering{
					VPCID: vpc,
					Peering: &apiclient.Peering{
						ID: fmt.Sprintf("peer-%s-%d", vpc, p), PeerAccountID: "123456789012", PeerRegionCode: "us-east-1",
						PeerVPCID: "vpc-peer", ProvisionedID: "pcx-" + vpc, Status: apiclient.PeeringActive,
					},
					StatusSince: now.Add(-time.Hour),
				})
			}
		}
	}
	for _, part := range fleet.Parts {
		s.Parts = append(s.Parts, fleet.PartHealth{Name: part, Success: true, Duration: time.Second, LastSuccess: now})
	}
	return s
}

// Recorder is a publisher that keeps what it is given.
type Recorder struct {
	Got     []*fleet.Snapshot
	Removed []string
}

// SetSnapshot keeps s.
func (r *Recorder) SetSnapshot(s *fleet.Snapshot) { r.Got = append(r.Got, s) }

// RemoveProject keeps projectID.
func (r *Recorder) RemoveProject(projectID string) { r.Removed = append(r.Removed, projectID) }
