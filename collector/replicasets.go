package collector

import (
	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	replicaSetInfoDesc = newDesc("clouddb_replica_set_info",
		"Static attributes of a read replica set, value 1.",
		"project_id", "service_id", "replica_set_id", "name", "environment", "host", "port")
	replicaSetStatusDesc = newDesc("clouddb_replica_set_status",
		"Status of a read replica set, 1 for the current one.",
		"project_id", "service_id", "replica_set_id", "status")
	replicaSetStatusChangedDesc = newDesc("clouddb_replica_set_status_changed_timestamp_seconds",
		"Time the exporter first saw a read replica set's status, in Unix seconds.",
		"project_id", "service_id", "replica_set_id")
	replicaSetNodesDesc = newDesc("clouddb_replica_set_nodes",
		"Number of nodes of a read replica set.",
		"project_id", "service_id", "replica_set_id")
	replicaSetCPUDesc = newDesc("clouddb_replica_set_cpu_cores",
		"CPU of a read replica set, in cores.",
		"project_id", "service_id", "replica_set_id")
	replicaSetMemoryDesc = newDesc("clouddb_replica_set_memory_bytes",
		"Memory of a read replica set, in bytes.",
		"project_id", "service_id", "replica_set_id")
	replicaSetPoolerDesc = newDesc("clouddb_replica_set_connection_pooler_enabled",
		"Whether a read replica set has a connection pooler.",
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
