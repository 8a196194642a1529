package collector

import (
	"slices"
	"sync"
)

var allDescs = sync.OnceValue(func() []*Desc {
	registry.closed = true
	return slices.Concat(stateDescs, registry.descs)
})

var stateDescs = []*Desc{
	serviceInfoDesc, serviceStatusDesc, servicePausedDesc, serviceCreatedDesc,
	serviceStatusChangedDesc, serviceResourcesDesc, serviceCPUDesc, serviceMemoryDesc,
	serviceVolumeDesc, servicePoolerDesc,
	serviceSharedDesc, serviceCPUUsageDesc, serviceMemoryUsageDesc, serviceStorageUsageDesc,
	serviceHAReplicasDesc, serviceHASyncReplicasDesc, serviceForkDesc, serviceVPCEndpointDesc,
	replicaSetInfoDesc, replicaSetStatusDesc, replicaSetStatusChangedDesc, replicaSetNodesDesc,
	replicaSetCPUDesc, replicaSetMemoryDesc, replicaSetPoolerDesc,
	vpcInfoDesc,
	peeringInfoDesc, peeringStatusDesc, peeringStatusChangedDesc, peeringErrorDesc, peeringErrorInfoDesc,
	apiKeyInfoDesc, apiKeyCreatedDesc, projectInfoDesc,
	collectorSuccessDesc, collectorDurationDesc, collectorLastSuccessDesc, snapshotTimestampDesc, upDesc, projectDownCauseDesc, clockSkewDesc,
}
