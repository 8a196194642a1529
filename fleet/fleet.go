// Package fleet holds the immutable snapshot of one project's resources.
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

// Snapshot is one project as last observed; each list is sorted and its ids unique.
type Snapshot struct {
	ProjectID   string
	ProjectName string
	// Seq: a consumer keeps the highest; 0 means unnumbered.
	Seq   uint64
	Taken time.Time
	// Read is the end of the last successful API call.
	Read        time.Time
	Services    []Service
	ReplicaSets []ReplicaSet
	VPCs        []apiclient.VPC
	Peerings    []Peering
	// Auth is nil when not collected or older than the staleness bound.
	Auth  *apiclient.AuthInfo
	Parts []PartHealth
	// Data is each data-plane part's, by name; a map per snapshot, set with SetData.
	Data map[string]any
	// ClockSkew is the API's clock minus the exporter's (the Date header), when ClockSkewKnown.
	ClockSkew      time.Duration
	ClockSkewKnown bool
	Access         Access
	Budget         Budget
}

// Service is a service with its history; apiclient values are shared, never modified.
type Service struct {
	*apiclient.Service
	StatusSince time.Time
}

// ReplicaSet is a replica set with its service.
type ReplicaSet struct {
	ServiceID string
	*apiclient.ReplicaSet
	StatusSince time.Time
}

// Peering is a VPC peering with its VPC.
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
	// LastError is short and already redacted by the API client.
	LastError string
}

// Budget is a project's API calls per full cycle against its rate limit.
type Budget struct {
	Needed, Planned int
	// PerInterval is -1 for no limit.
	PerInterval   int
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
