package apiclient

import (
	"cmp"
	"encoding/json"
	"strconv"
)

// Service statuses documented by the API (docs/api.md, "States"); others are kept, never rejected.
const (
	ServiceQueued      = "QUEUED"
	ServiceConfiguring = "CONFIGURING"
	ServiceReady       = "READY"
	ServiceUnstable    = "UNSTABLE"
	ServicePausing     = "PAUSING"
	ServicePaused      = "PAUSED"
	ServiceResuming    = "RESUMING"
	ServiceUpgrading   = "UPGRADING"
	ServiceOptimizing  = "OPTIMIZING"
	ServiceDeleting    = "DELETING"
	ServiceDeleted     = "DELETED"
)

// ServiceStatuses is every documented service status, in the spec's order.
var ServiceStatuses = []string{
	ServiceQueued, ServiceConfiguring, ServiceReady, ServiceUnstable, ServicePausing, ServicePaused,
	ServiceResuming, ServiceUpgrading, ServiceOptimizing, ServiceDeleting, ServiceDeleted,
}

// Replica set statuses documented by the API (docs/api.md, "States").
const (
	ReplicaSetCreating = "creating"
	ReplicaSetActive   = "active"
	ReplicaSetResizing = "resizing"
	ReplicaSetDeleting = "deleting"
	ReplicaSetError    = "error"
)

// ReplicaSetStatuses is every documented replica set status.
var ReplicaSetStatuses = []string{ReplicaSetCreating, ReplicaSetActive, ReplicaSetResizing, ReplicaSetDeleting, ReplicaSetError}

// Peering statuses the API documents; the full set is not documented.
const (
	PeeringPending = "pending"
	PeeringActive  = "active"
)

// PeeringStatuses is every peering status the spec shows.
var PeeringStatuses = []string{PeeringPending, PeeringActive}

// Service types (docs/api.md, "Service").
const (
	ServiceTypeTimeSeries = "TIMESERIESDB"
	// The time-series type as revision 2026 spells it.
	ServiceTypeTimescaleDB = "TIMESCALEDB"
	ServiceTypePostgres    = "POSTGRES"
	ServiceTypeVector      = "VECTOR"
)

// Addons accepted by service creation (docs/api.md, "Services").
const (
	AddonTimeSeries = "time-series"
	AddonAI         = "ai"
)

// Environment labels (docs/api.md, "States").
const (
	EnvironmentProd = "PROD"
	EnvironmentDev  = "DEV"
)

// Endpoint is a network address of a service, replica set or pooler.
type Endpoint struct {
	Host string `json:"host"`
	Port Int    `json:"port"`
}

// ConnectionPooler is present on a service or replica set when its pooler is enabled.
type ConnectionPooler struct {
	Endpoint *Endpoint `json:"endpoint,omitempty"`
}

// Metadata carries the environment label.
type Metadata struct {
	Environment string `json:"environment"`
}

func (m *Metadata) environment() string {
	if m == nil {
		return ""
	}
	return m.Environment
}

// ResourceSpec is one compute resource's size; nil is null (revision 2026's shared service) or absent.
type ResourceSpec struct {
	CPUMillis  *Int   `json:"cpu_millis"`
	MemoryGBs  *Int   `json:"memory_gbs"`
	VolumeType string `json:"volume_type"`
}

// Resource is one compute resource of a service.
type Resource struct {
	ID   string        `json:"id"`
	Spec *ResourceSpec `json:"spec,omitempty"`
}

// ForkedFrom tells which service a fork was made from.
type ForkedFrom struct {
	ProjectID string `json:"project_id"`
	ServiceID string `json:"service_id"`
	IsStandby bool   `json:"is_standby"`
}

// Service is a managed database service (docs/api.md, "Service").
type Service struct {
	ServiceID   string `json:"service_id"`
	ProjectID   string `json:"project_id"`
	Name        string `json:"name"`
	RegionCode  string `json:"region_code"`
	ServiceType string `json:"service_type"`
	Status      string `json:"status"`
	Created     Time   `json:"created"`
	// First revision only; use IsPaused.
	Paused           *bool             `json:"paused,omitempty"`
	Resources        []Resource        `json:"resources"`
	Metadata         *Metadata         `json:"metadata,omitempty"`
	Endpoint         *Endpoint         `json:"endpoint,omitempty"`
	ConnectionPooler *ConnectionPooler `json:"connection_pooler,omitempty"`
	InitialPassword  Secret            `json:"initial_password,omitempty"`
	ForkedFrom       *ForkedFrom       `json:"forked_from,omitempty"`
	// The fields below are sent by revision 2026 only.

	Metrics    *ServiceMetrics `json:"metrics,omitempty"`
	HAReplicas *HAReplicas     `json:"ha_replicas,omitempty"`
	// Use VPCAddress, which also reads the deprecated spelling.
	VPCEndpoint           *VPCEndpoint `json:"vpc_endpoint,omitempty"`
	VPCEndpointDeprecated *VPCEndpoint `json:"vpcEndpoint,omitempty"`
	// nil means absent or null: the replica sets are unknown, not none.
	ReadReplicaSets []ReplicaSet `json:"read_replica_sets,omitzero"`
	Dropped         []FieldError `json:"-"`
}

// ServiceMetrics is a service's current usage (revision 2026); nil is null or absent.
type ServiceMetrics struct {
	MemoryMB  *Int `json:"memory_mb"`
	StorageMB *Int `json:"storage_mb"`
	MilliCPU  *Int `json:"milli_cpu"`
}

// HAReplicas are a service's high-availability replicas (revision 2026).
type HAReplicas struct {
	ReplicaCount     *Int `json:"replica_count"`
	SyncReplicaCount *Int `json:"sync_replica_count"`
}

// VPCEndpoint is the address of a service inside its VPC (revision 2026).
type VPCEndpoint struct {
	Host  string `json:"host"`
	Port  Int    `json:"port"`
	VPCID string `json:"vpc_id"`
}

// IsPaused reports the first revision's paused field when sent, else a PAUSED or PAUSING status.
func (s *Service) IsPaused() bool {
	if s.Paused != nil {
		return *s.Paused
	}
	return s.Status == ServicePaused || s.Status == ServicePausing
}

// VPCAddress returns the VPC endpoint in either spelling, or nil.
func (s *Service) VPCAddress() *VPCEndpoint { return cmp.Or(s.VPCEndpoint, s.VPCEndpointDeprecated) }

// Shared reports whether the primary's sizes are both null (not dropped as bad): shared resources.
func (s *Service) Shared() bool {
	if len(s.Resources) == 0 || s.Resources[0].Spec == nil {
		return false
	}
	spec := s.Resources[0].Spec
	return spec.CPUMillis == nil && spec.MemoryGBs == nil &&
		!s.FieldDropped("resources.0.spec.cpu_millis") && !s.FieldDropped("resources.0.spec.memory_gbs")
}

// Environment returns the service's environment label, or "".
func (s *Service) Environment() string { return s.Metadata.environment() }

// ReplicaSet is a read replica set of a service (docs/api.md, "Replica set").
type ReplicaSet struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Status           string            `json:"status"`
	Nodes            Int               `json:"nodes"`
	CPUMillis        Int               `json:"cpu_millis"`
	MemoryGBs        Int               `json:"memory_gbs"`
	Endpoint         *Endpoint         `json:"endpoint,omitempty"`
	ConnectionPooler *ConnectionPooler `json:"connection_pooler,omitempty"`
	Metadata         *Metadata         `json:"metadata,omitempty"`
	Dropped          []FieldError      `json:"-"`
}

// Environment returns the replica set's environment label, or "".
func (r *ReplicaSet) Environment() string { return r.Metadata.environment() }

// VPC is a virtual private cloud (docs/api.md, "VPC").
type VPC struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	CIDR       string `json:"cidr"`
	RegionCode string `json:"region_code"`
}

// Peering is a VPC peering connection; ErrorMessage is nil without an error.
type Peering struct {
	ID             string       `json:"id"`
	PeerAccountID  string       `json:"peer_account_id"`
	PeerRegionCode string       `json:"peer_region_code"`
	PeerVPCID      string       `json:"peer_vpc_id"`
	ProvisionedID  string       `json:"provisioned_id"`
	Status         string       `json:"status"`
	ErrorMessage   *string      `json:"error_message"`
	Dropped        []FieldError `json:"-"`
}

// AuthInfo reports the credentials in use; revisions spell the key apiKey or api_key: use Key.
type AuthInfo struct {
	APIKeyDeprecated *APIKeyInfo `json:"apiKey,omitempty"`
	APIKey           *APIKeyInfo `json:"api_key,omitempty"`
	OAuth            *OAuthInfo  `json:"oauth,omitempty"`
	Type             string      `json:"type"`
}

// Key returns the API key information in either spelling, or nil.
func (a *AuthInfo) Key() *APIKeyInfo { return cmp.Or(a.APIKey, a.APIKeyDeprecated) }

// OAuthInfo describes OAuth credentials (revision 2026).
type OAuthInfo struct {
	User User `json:"user"`
}

// Project is a project the caller can access (GET /projects, revision 2026).
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// APIKeyInfo describes the API key credentials.
type APIKeyInfo struct {
	Created     Time        `json:"created"`
	IssuingUser User        `json:"issuing_user"`
	Name        string      `json:"name"`
	Project     AuthProject `json:"project"`
	PublicKey   string      `json:"public_key"`
}

// User is the user who created a credential.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// AuthProject is the project a credential belongs to.
type AuthProject struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	PlanType string `json:"plan_type"`
}

// Message is the body of operations that answer with a text message.
type Message struct {
	Message string `json:"message"`
}

// Size is a service size as revision 2026 sends it: digits, or SizeShared.
type Size string

// SizeShared asks for a shared-resource service (no dedicated size).
const SizeShared Size = "shared"

// SizeOf is n as a Size.
func SizeOf(n int64) Size { return Size(strconv.FormatInt(n, 10)) }

// CreateServiceRequest is createService's body (revision 2026); Addons must be [], not null.
type CreateServiceRequest struct {
	Name           string   `json:"name"`
	Addons         []string `json:"addons"`
	RegionCode     string   `json:"region_code,omitempty"`
	ReplicaCount   *int64   `json:"replica_count,omitempty"`
	CPUMillis      Size     `json:"cpu_millis"`
	MemoryGBs      Size     `json:"memory_gbs"`
	EnvironmentTag string   `json:"environment_tag,omitempty"`
}

// ResizeServiceRequest is the body of resizeService: digit strings.
type ResizeServiceRequest struct {
	CPUMillis Size `json:"cpu_millis"`
	MemoryGBs Size `json:"memory_gbs"`
}

// RenameServiceRequest is the body of renameService (revision 2026).
type RenameServiceRequest struct {
	Name string `json:"name"`
}

// UpdatePasswordRequest is the body of updatePassword.
type UpdatePasswordRequest struct {
	Password Secret `json:"password"`
}

// SetEnvironmentRequest is the body of set*Environment.
type SetEnvironmentRequest struct {
	Environment string `json:"environment"`
}

// SetHARequest is the body of setHA: at least one count.
type SetHARequest struct {
	ReplicaCount     *int64 `json:"replica_count,omitempty"`
	SyncReplicaCount *int64 `json:"sync_replica_count,omitempty"`
}

// Fork strategies of forkService (revision 2026).
const (
	ForkLastSnapshot = "LAST_SNAPSHOT"
	ForkNow          = "NOW"
	ForkPITR         = "PITR"
)

// ForkServiceRequest is forkService's body; TargetTime is for ForkPITR, RegionCode for the first revision.
type ForkServiceRequest struct {
	ForkStrategy   string `json:"fork_strategy"`
	TargetTime     *Time  `json:"target_time,omitempty"`
	Name           string `json:"name,omitempty"`
	RegionCode     string `json:"region_code,omitempty"`
	CPUMillis      Size   `json:"cpu_millis,omitempty"`
	MemoryGBs      Size   `json:"memory_gbs,omitempty"`
	EnvironmentTag string `json:"environment_tag,omitempty"`
}

// VPCAttachmentRequest is the body of attachToVPC and detachFromVPC.
type VPCAttachmentRequest struct {
	VPCID string `json:"vpc_id"`
}

// CreateReplicaSetRequest is the body of createReplicaSet.
type CreateReplicaSetRequest struct {
	Name      string `json:"name"`
	CPUMillis int64  `json:"cpu_millis"`
	MemoryGBs int64  `json:"memory_gbs"`
	Nodes     int64  `json:"nodes"`
}

// ResizeReplicaSetRequest is resizeReplicaSet's body; Nodes, when set, is for the first revision.
type ResizeReplicaSetRequest struct {
	CPUMillis Size   `json:"cpu_millis"`
	MemoryGBs Size   `json:"memory_gbs"`
	Nodes     *int64 `json:"nodes,omitempty"`
}

// CreateVPCRequest is the body of createVPC.
type CreateVPCRequest struct {
	Name       string `json:"name"`
	CIDR       string `json:"cidr"`
	RegionCode string `json:"region_code"`
}

// RenameVPCRequest is the body of renameVPC.
type RenameVPCRequest struct {
	Name string `json:"name"`
}

// CreatePeeringRequest is the body of createPeering.
type CreatePeeringRequest struct {
	PeerAccountID  string `json:"peer_account_id"`
	PeerRegionCode string `json:"peer_region_code"`
	PeerVPCID      string `json:"peer_vpc_id"`
}

// ErrorBody is the JSON error body of the API (docs/api.md, "Errors").
type ErrorBody struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
}
