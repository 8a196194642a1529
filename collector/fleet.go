package collector

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// allDescs lists the descriptor of every metric the FleetCollector can emit:
// the state's, then the data-plane parts' (registerPart).
var allDescs = sync.OnceValue(func() []*Desc {
	registry.closed = true
	return slices.Concat(stateDescs, registry.descs)
})

// stateDescs lists the descriptors of the state's metrics.
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
	collectorSuccessDesc, collectorDurationDesc, collectorLastSuccessDesc, snapshotTimestampDesc, upDesc,
}

// FleetCollector is a prometheus.Collector that emits the resource metrics
// of every snapshot its source returns, as const metrics built on each
// Collect. The exporter does not register it: the exposition renders the
// same collect functions straight to text once per change. It is the
// oracle the tests hold that renderer to (client_golang's encoding of the
// same series), and it holds no state of its own.
type FleetCollector struct {
	source func() []*fleet.Snapshot
}

// NewFleetCollector returns a collector over the snapshots that source
// returns at each Collect. Nil snapshots are skipped; each snapshot's
// project must appear only once.
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

// collectSnapshot emits every resource metric of s, group by group: the
// one description of what the FleetCollector and the exposition hold.
func collectSnapshot(out *Sink, s *fleet.Snapshot) {
	groups := Groups()
	for i := range groups {
		groups[i].Collect(out, s)
	}
}
