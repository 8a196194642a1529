package apiclient

// Service statuses documented in section 3.1 of the spec. The API may send
// others; they are kept as they are, never rejected.
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

// Replica set statuses documented in section 3.2 of the spec.
const (
	ReplicaSetCreating = "creating"
	ReplicaSetActive   = "active"
	ReplicaSetResizing = "resizing"
	ReplicaSetDeleting = "deleting"
	ReplicaSetError    = "error"
)

// ReplicaSetStatuses is every documented replica set status.
var ReplicaSetStatuses = []string{ReplicaSetCreating, ReplicaSetActive, ReplicaSetResizing, ReplicaSetDeleting, ReplicaSetError}

// Peering statuses seen in the spec (section 3.3); the full set is not shown.
const (
	PeeringPending = "pending"
	PeeringActive  = "active"
)

// PeeringStatuses is every peering status the spec shows.
var PeeringStatuses = []string{PeeringPending, PeeringActive}

// Service types (section 2.1).
const (
	ServiceTypeTimeSeries = "TIMESERIESDB"
	ServiceTypePostgres   = "POSTGRES"
	ServiceTypeVector     = "VECTOR"
)

// Addons accepted by service creation (section 1).
const (
	AddonTimeSeries = "time-series"
	AddonAI         = "ai"
)

// Environment labels (section 3.4).
const (
	EnvironmentProd = "PROD"
	EnvironmentDev  = "DEV"
)

// Endpoint is a network address of a service, replica set or pooler.
type Endpoint struct {
	Host string `json:"host"`
	Port Int    `json:"port"`
}

// ConnectionPooler describes a connection pooler. Its presence on a service
// or replica set is what tells that the pooler is enabled.
type ConnectionPooler struct {
	Endpoint *Endpoint `json:"endpoint,omitempty"`
}

// Metadata carries the environment label.
type Metadata struct {
	Environment string `json:"environment"`
}

// ResourceSpec is the size of one compute resource of a service.
type ResourceSpec struct {
	CPUMillis  Int    `json:"cpu_millis"`
	MemoryGBs  Int    `json:"memory_gbs"`
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

// Service is a managed database service (section 2.1).
type Service struct {
	ServiceID        string            `json:"service_id"`
	ProjectID        string            `json:"project_id"`
	Name             string            `json:"name"`
	RegionCode       string            `json:"region_code"`
	ServiceType      string            `json:"service_type"`
	Status           string            `json:"status"`
	Created          Time              `json:"created"`
	Paused           bool              `json:"paused"`
	Resources        []Resource        `json:"resources"`
	Metadata         *Metadata         `json:"metadata,omitempty"`
	Endpoint         *Endpoint         `json:"endpoint,omitempty"`
	ConnectionPooler *ConnectionPooler `json:"connection_pooler,omitempty"`
	// InitialPassword is only sent in the responses to creation and fork.
	InitialPassword Secret      `json:"initial_password,omitempty"`
	ForkedFrom      *ForkedFrom `json:"forked_from,omitempty"`
	// Dropped lists the fields whose values did not decode; they are left
	// at zero, which is not their value.
	Dropped []FieldError `json:"-"`
}

// Environment returns the service's environment label, or "" when the API
// sent no metadata.
func (s *Service) Environment() string {
	if s.Metadata == nil {
		return ""
	}
	return s.Metadata.Environment
}

// ReplicaSet is a read replica set of a service (section 2.2). The create
// response carries only ID, Name, Status, Nodes, CPUMillis and MemoryGBs.
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
	// Dropped lists the fields whose values did not decode; they are left
	// at zero, which is not their value.
	Dropped []FieldError `json:"-"`
}

// Environment returns the replica set's environment label, or "".
func (r *ReplicaSet) Environment() string {
	if r.Metadata == nil {
		return ""
	}
	return r.Metadata.Environment
}

// VPC is a virtual private cloud (section 2.3).
type VPC struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	CIDR       string `json:"cidr"`
	RegionCode string `json:"region_code"`
}

// Peering is a VPC peering connection (section 2.4). ErrorMessage is nil when
// there is no error.
type Peering struct {
	ID             string  `json:"id"`
	PeerAccountID  string  `json:"peer_account_id"`
	PeerRegionCode string  `json:"peer_region_code"`
	PeerVPCID      string  `json:"peer_vpc_id"`
	ProvisionedID  string  `json:"provisioned_id"`
	Status         string  `json:"status"`
	ErrorMessage   *string `json:"error_message"`
	// Dropped lists the fields whose values did not decode.
	Dropped []FieldError `json:"-"`
}

// AuthInfo reports the credentials in use (section 2.5).
type AuthInfo struct {
	APIKey APIKeyInfo `json:"apiKey"`
	Type   string     `json:"type"`
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

// CreateServiceRequest is the body of createService. Addons must be an empty
// list, not null, for a plain Postgres service.
type CreateServiceRequest struct {
	Name       string   `json:"name"`
	Addons     []string `json:"addons"`
	RegionCode string   `json:"region_code"`
	CPUMillis  int64    `json:"cpu_millis"`
	MemoryGBs  int64    `json:"memory_gbs"`
}

// ResizeServiceRequest is the body of resizeService.
type ResizeServiceRequest struct {
	CPUMillis int64 `json:"cpu_millis"`
	MemoryGBs int64 `json:"memory_gbs"`
}

// UpdatePasswordRequest is the body of updatePassword.
type UpdatePasswordRequest struct {
	Password Secret `json:"password"`
}

// SetEnvironmentRequest is the body of setServiceEnvironment and
// setReplicaSetEnvironment.
type SetEnvironmentRequest struct {
	Environment string `json:"environment"`
}

// SetHARequest is the body of setHA.
type SetHARequest struct {
	ReplicaCount int64 `json:"replica_count"`
}

// ForkServiceRequest is the body of forkService.
type ForkServiceRequest struct {
	Name       string `json:"name"`
	RegionCode string `json:"region_code"`
	CPUMillis  int64  `json:"cpu_millis"`
	MemoryGBs  int64  `json:"memory_gbs"`
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

// ResizeReplicaSetRequest is the body of resizeReplicaSet.
type ResizeReplicaSetRequest struct {
	CPUMillis int64 `json:"cpu_millis"`
	MemoryGBs int64 `json:"memory_gbs"`
	Nodes     int64 `json:"nodes"`
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

// ErrorBody is the JSON error body of section 7.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
