package apiclient

// Operation names. They are stable: they appear in metrics, logs, audit
// records and the admin surface's allow list, and the simulator counts
// requests under the same names.
const (
	OpGetAuthInfo = "getAuthInfo"

	OpListServices          = "listServices"
	OpCreateService         = "createService"
	OpGetService            = "getService"
	OpDeleteService         = "deleteService"
	OpResizeService         = "resizeService"
	OpUpdatePassword        = "updatePassword"
	OpSetServiceEnvironment = "setServiceEnvironment"
	OpSetHA                 = "setHA"
	OpEnableServicePooler   = "enableServicePooler"
	OpDisableServicePooler  = "disableServicePooler"
	OpForkService           = "forkService"
	OpAttachToVPC           = "attachToVPC"
	OpDetachFromVPC         = "detachFromVPC"

	OpListReplicaSets          = "listReplicaSets"
	OpCreateReplicaSet         = "createReplicaSet"
	OpDeleteReplicaSet         = "deleteReplicaSet"
	OpResizeReplicaSet         = "resizeReplicaSet"
	OpEnableReplicaSetPooler   = "enableReplicaSetPooler"
	OpDisableReplicaSetPooler  = "disableReplicaSetPooler"
	OpSetReplicaSetEnvironment = "setReplicaSetEnvironment"

	OpListVPCs  = "listVPCs"
	OpCreateVPC = "createVPC"
	OpGetVPC    = "getVPC"
	OpRenameVPC = "renameVPC"
	OpDeleteVPC = "deleteVPC"

	OpListPeerings  = "listPeerings"
	OpCreatePeering = "createPeering"
	OpGetPeering    = "getPeering"
	OpDeletePeering = "deletePeering"
)

// Operations lists every operation of the API, reads first.
var Operations = []string{
	OpGetAuthInfo,
	OpListServices, OpGetService, OpListReplicaSets, OpListVPCs, OpGetVPC, OpListPeerings, OpGetPeering,
	OpCreateService, OpDeleteService, OpResizeService, OpUpdatePassword, OpSetServiceEnvironment,
	OpSetHA, OpEnableServicePooler, OpDisableServicePooler, OpForkService, OpAttachToVPC, OpDetachFromVPC,
	OpCreateReplicaSet, OpDeleteReplicaSet, OpResizeReplicaSet, OpEnableReplicaSetPooler,
	OpDisableReplicaSetPooler, OpSetReplicaSetEnvironment,
	OpCreateVPC, OpRenameVPC, OpDeleteVPC,
	OpCreatePeering, OpDeletePeering,
}
