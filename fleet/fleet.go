// Package fleet holds the immutable snapshot of one project's resources
// (API -> snapshot -> exposition): a change produces a new Snapshot.
package fleet

import (
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Parts of a collection cycle, also the `collector` label of self-metrics.
const (
	PartServices    = "services"
	PartReplicaSets = "replica_sets"
	PartVPCs        = "vpcs"
	PartPeerings    = "peerings"
	PartAuth        = "auth"
)

// Parts lists every part in a fixed order.
var Parts = []string{PartServices, PartReplicaSets, PartVPCs, PartPeerings, PartAuth}

// Snapshot is the state of one project as last observed. Ids are unique
// within each list: the poller drops duplicates so no series is exported twice.
type Snapshot struct {
	ProjectID string
	// From GET /projects; "" when unknown.
	ProjectName string
	// A consumer that receives snapshots out of order keeps the highest Seq;
	// 0 means unnumbered.
	Seq   uint64
	Taken time.Time
	// Read is the end of the last API call that succeeded: its age is how
	// long the exporter has had nothing new from the API.
	Read time.Time
	// Sorted by ServiceID.
	Services []Service
	// Sorted by ServiceID, then ID.
	ReplicaSets []ReplicaSet
	// Sorted by ID.
	VPCs []apiclient.VPC
	// Sorted by VPCID, then ID.
	Peerings []Peering
	// Nil when auth info is not collected or is older than the staleness bound.
	Auth *apiclient.AuthInfo
	// In Parts order, then PartUsage, PartLogs and the other data-plane
	// parts by name; parts not collected are absent.
	Parts []PartHealth
	// Data holds what each data-plane reader published, by part name
	// (PartUsage: *Usage, PartLogs: *Logs...); nil when none did. Each
	// snapshot has its own map: set it with SetData.
	Data   map[string]any
	Access Access
	// Zero before the first full cycle.
	Budget Budget
}

// Service is a service with what the exporter knows of its history. The
// apiclient value is shared by every snapshot that holds it, never modified.
type Service struct {
	*apiclient.Service
	StatusSince time.Time
}

// ReplicaSet is a replica set with its service; the apiclient value is
// shared, as Service's is.
type ReplicaSet struct {
	ServiceID string
	*apiclient.ReplicaSet
	StatusSince time.Time
}

// Peering is a VPC peering with its VPC; the apiclient value is shared, as
// Service's is.
type Peering struct {
	VPCID string
	*apiclient.Peering
	StatusSince time.Time
}

// PartHealth is the outcome of the last attempt to collect one part.
type PartHealth struct {
	Name        string
	Success     bool
	Duration    time.Duration
	LastSuccess time.Time
	// Cut to a few hundred bytes; the API client has redacted credentials.
	LastError string
}

// Budget is a project's API calls per full cycle against its rate limit.
type Budget struct {
	// Calls to refresh every list in one cycle; calls the last cycle planned.
	Needed, Planned int
	// -1 for no limit.
	PerInterval int
	// The interval, or a multiple of it when over budget.
	RefreshPeriod time.Duration
}

// SetData sets the data of a data-plane part in s.
func (s *Snapshot) SetData(part string, v any) {
	if s.Data == nil {
		s.Data = map[string]any{}
	}
	s.Data[part] = v
}

// DataOf returns the data of a data-plane part in s, nil when s has none.
func DataOf[T any](s *Snapshot, part string) *T {
	v, _ := s.Data[part].(*T)
	return v
}
