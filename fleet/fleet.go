// Package fleet holds the immutable snapshot of one project's resources that
// the poller produces and the collector renders: API -> snapshot ->
// exposition. Nothing in a published Snapshot is ever modified; a change
// produces a new Snapshot.
package fleet

import (
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Parts of a collection cycle, also the values of the `collector` label of
// the exporter's self-metrics.
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
// within each list (services, the resources of a service, the replica sets
// of a service, VPCs, the peerings of a VPC): the poller drops duplicates
// the API may send, so no series is ever exported twice.
type Snapshot struct {
	ProjectID string
	// ProjectName is the project's name from GET /projects (project
	// discovery); "" when unknown.
	ProjectName string
	// Seq numbers snapshots in the order they were built: a consumer that
	// receives them out of order keeps the highest. 0 means unnumbered.
	Seq uint64
	// Taken is when the snapshot was assembled: it advances with every
	// snapshot, during an outage too.
	Taken time.Time
	// Read is when the newest data of the snapshot was read: the end of
	// the project's last API call that succeeded. It stops while no call
	// succeeds (an outage, refused keys), so its age is how long the
	// exporter has had nothing new from the API; zero before the first.
	Read time.Time
	// Services are sorted by ServiceID.
	Services []Service
	// ReplicaSets are sorted by ServiceID, then ID.
	ReplicaSets []ReplicaSet
	// VPCs are sorted by ID.
	VPCs []apiclient.VPC
	// Peerings are sorted by VPCID, then ID.
	Peerings []Peering
	// Auth is nil when auth info is not collected (no API key) or has never
	// been fetched successfully within the staleness bound.
	Auth *apiclient.AuthInfo
	// Parts reports the health of each collected part, in Parts order,
	// then PartUsage and PartLogs. A part that is not collected (auth
	// without an API key, usage or logs without its collector) is absent.
	Parts []PartHealth
	// Usage is the opt-in usage collector's data; nil when it is off.
	Usage *Usage
	// Logs is the opt-in log collector's counts; nil when it is off.
	Logs *Logs
	// Access is what the last services list said of the exporter's access
	// to the project.
	Access Access
	// Budget is the last full cycle's calls; zero before the first.
	Budget Budget
}

// Service is a service with what the exporter knows of its history. The
// apiclient value is the one the poller keeps, shared by every snapshot
// that holds it (a snapshot entry is a pointer, not a copy of the 280-byte
// value): it is never modified.
type Service struct {
	*apiclient.Service
	// StatusSince is when the exporter first saw the current status.
	StatusSince time.Time
}

// ReplicaSet is a replica set with the service it belongs to. The
// apiclient value is shared, as Service's is, and never modified.
type ReplicaSet struct {
	ServiceID string
	*apiclient.ReplicaSet
	// StatusSince is when the exporter first saw the current status.
	StatusSince time.Time
}

// Peering is a VPC peering with the VPC it belongs to. The apiclient value
// is shared, as Service's is, and never modified.
type Peering struct {
	VPCID string
	*apiclient.Peering
	// StatusSince is when the exporter first saw the current status.
	StatusSince time.Time
}

// PartHealth is the outcome of the last attempt to collect one part.
type PartHealth struct {
	Name string
	// Success is true when every API call of the part's last attempt
	// succeeded.
	Success bool
	// Duration is how long the part's last attempt took.
	Duration time.Duration
	// LastSuccess is when the part last succeeded completely; zero if never.
	LastSuccess time.Time
	// LastError is the first error of the part's last attempt, cut to a
	// few hundred bytes; "" when it succeeded. The API client redacts the
	// credentials from every error it returns.
	LastError string
}

// Budget is a project's API calls per full cycle against what its rate
// limit allows (--api.rate-limit times --collect.interval).
type Budget struct {
	// Needed is how many calls refreshing every list in one cycle takes;
	// Planned how many the last cycle planned.
	Needed, Planned int
	// PerInterval is how many calls the rate limit allows per interval,
	// -1 for no limit.
	PerInterval int
	// RefreshPeriod is how long refreshing every replica set and peering
	// list takes: the interval, or a multiple of it over budget.
	RefreshPeriod time.Duration
}
