package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// allDescs lists the descriptor of every metric the FleetCollector can emit.
var allDescs = []*prometheus.Desc{
	serviceInfoDesc, serviceStatusDesc, servicePausedDesc, serviceCreatedDesc,
	serviceStatusChangedDesc, serviceResourcesDesc, serviceCPUDesc, serviceMemoryDesc,
	serviceVolumeDesc, servicePoolerDesc,
	replicaSetInfoDesc, replicaSetStatusDesc, replicaSetStatusChangedDesc, replicaSetNodesDesc,
	replicaSetCPUDesc, replicaSetMemoryDesc, replicaSetPoolerDesc,
	vpcInfoDesc,
	peeringInfoDesc, peeringStatusDesc, peeringStatusChangedDesc, peeringErrorDesc,
	apiKeyInfoDesc, apiKeyCreatedDesc,
	collectorSuccessDesc, collectorDurationDesc, collectorLastSuccessDesc, snapshotTimestampDesc,
}

// FleetCollector is a prometheus.Collector that emits the resource metrics
// of every snapshot its source returns, as const metrics built on each
// Collect. It holds no state of its own, so the same code serves both a
// registry scraped live and the Exposition's once-per-change rendering.
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
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *FleetCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.source() {
		if s == nil {
			continue
		}
		collectServices(ch, s)
		collectReplicaSets(ch, s)
		collectVPCs(ch, s)
		collectPeerings(ch, s)
		collectAuth(ch, s)
		collectHealth(ch, s)
	}
}
