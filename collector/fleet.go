package collector

import (
	"cmp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// allDescs lists the descriptor of every metric the FleetCollector can emit.
var allDescs = []*metricDesc{
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
	collectorSuccessDesc, collectorDurationDesc, collectorLastSuccessDesc, snapshotTimestampDesc,
}

// familyDescs is allDescs sorted by name, the order of the families in an
// exposition; each descriptor's family is its index here.
var familyDescs = sortFamilies(allDescs)

func sortFamilies(descs []*metricDesc) []*metricDesc {
	sorted := slices.Clone(descs)
	slices.SortFunc(sorted, func(a, b *metricDesc) int { return cmp.Compare(a.name, b.name) })
	for i, d := range sorted {
		d.family = i
	}
	return sorted
}

// FleetCollector is a prometheus.Collector that emits the resource metrics
// of every snapshot its source returns, as const metrics built on each
// Collect. The exporter does not register it: the Exposition renders the
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
	for _, d := range allDescs {
		ch <- d.desc
	}
}

// Collect implements prometheus.Collector.
func (c *FleetCollector) Collect(ch chan<- prometheus.Metric) {
	out := &sink{ch: ch}
	for _, s := range c.source() {
		if s != nil {
			collectSnapshot(out, s)
		}
	}
}

// collectSnapshot emits every resource metric of s: the one description of
// what the FleetCollector and the Exposition's rendering hold.
func collectSnapshot(out *sink, s *fleet.Snapshot) {
	collectServices(out, s)
	collectReplicaSets(out, s)
	collectVPCs(out, s)
	collectPeerings(out, s)
	collectAuth(out, s)
	collectHealth(out, s)
}
