package collector

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/fleet"
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

// FleetCollector is a prometheus.Collector over the same collect functions. The
// exporter does not register it: it is the oracle the exposition is tested against.
type FleetCollector struct {
	source func() []*fleet.Snapshot
}

// NewFleetCollector returns a collector over source() at each Collect; nil
// snapshots are skipped, and a project must appear only once.
func NewFleetCollector(source func() []*fleet.Snapshot) *FleetCollector {
	return &FleetCollector{source: source}
}

// NewFleetCollectorOf returns a collector over a fixed set of snapshots.
func NewFleetCollectorOf(snapshots ...*fleet.Snapshot) *FleetCollector {
	return NewFleetCollector(func() []*fleet.Snapshot { return snapshots })
}

// Describe implements prometheus.Collector.
func (c *FleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs() {
		ch <- d.desc
	}
}

// Collect implements prometheus.Collector.
func (c *FleetCollector) Collect(ch chan<- prometheus.Metric) {
	out := &Sink{ch: ch}
	for _, s := range c.source() {
		if s != nil {
			collectSnapshot(out, s)
		}
	}
}

func collectSnapshot(out *Sink, s *fleet.Snapshot) {
	groups := Groups()
	for i := range groups {
		groups[i].Collect(out, s)
	}
}
