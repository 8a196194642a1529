package collector

import (
	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	replicaSetInfoDesc = newDesc("clouddb_replica_set_info",
		"Static attributes of a read replica set, value 1, from the list of replica sets of a service (id, name, metadata.environment, endpoint.host, endpoint.port; empty when the API sends none)."+cachedNote,
		"project_id", "service_id", "replica_set_id", "name", "environment", "host", "port")
	replicaSetStatusDesc = newDesc("clouddb_replica_set_status",
		"Status of a read replica set as a state set, from the status field: 1 for the current status, 0 for the other documented ones; an undocumented status is one more series with value 1."+cachedNote,
		"project_id", "service_id", "replica_set_id", "status")
	replicaSetStatusChangedDesc = newDesc("clouddb_replica_set_status_changed_timestamp_seconds",
		"Unix seconds at which the exporter first saw the current status of a read replica set (the API reports no transition times)."+cachedNote,
		"project_id", "service_id", "replica_set_id")
	replicaSetNodesDesc = newDesc("clouddb_replica_set_nodes",
		"Number of nodes of a read replica set, from the nodes field."+cachedNote,
		"project_id", "service_id", "replica_set_id")
	replicaSetCPUDesc = newDesc("clouddb_replica_set_cpu_cores",
		"CPU of a read replica set in cores, from the cpu_millis field divided by 1000."+cachedNote,
		"project_id", "service_id", "replica_set_id")
	replicaSetMemoryDesc = newDesc("clouddb_replica_set_memory_bytes",
		"Memory of a read replica set in bytes, from the memory_gbs field, GB read as GiB (2^30 bytes)."+cachedNote,
		"project_id", "service_id", "replica_set_id")
	replicaSetPoolerDesc = newDesc("clouddb_replica_set_connection_pooler_enabled",
		"Whether a read replica set has a connection pooler (1) or not (0): 1 when the connection_pooler field is present."+cachedNote,
		"project_id", "service_id", "replica_set_id")
)

func collectReplicaSets(out *Sink, s *fleet.Snapshot) {
	p := s.ProjectID
	for i := range s.ReplicaSets {
		rs := &s.ReplicaSets[i]
		svc, id := rs.ServiceID, rs.ID
		host, port := endpointLabels(rs.Endpoint)
		out.gauge(replicaSetInfoDesc, 1, p, svc, id, rs.Name, rs.Environment(), host, port)
		stateSet(out, replicaSetStatusDesc, apiclient.ReplicaSetStatuses, rs.Status, p, svc, id)
		timestamp(out, replicaSetStatusChangedDesc, rs.StatusSince, p, svc, id)
		// A value that did not decode is unknown, not zero.
		if !rs.FieldDropped("nodes") {
			out.gauge(replicaSetNodesDesc, float64(rs.Nodes), p, svc, id)
		}
		if !rs.FieldDropped("cpu_millis") {
			out.gauge(replicaSetCPUDesc, milliCoresToCores(rs.CPUMillis), p, svc, id)
		}
		if !rs.FieldDropped("memory_gbs") {
			out.gauge(replicaSetMemoryDesc, gigabytesToBytes(rs.MemoryGBs), p, svc, id)
		}
		out.gauge(replicaSetPoolerDesc, boolValue(rs.ConnectionPooler != nil), p, svc, id)
	}
}
