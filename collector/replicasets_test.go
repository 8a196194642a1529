package collector

import "testing"

func TestReplicaSetMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "replicasets.prom",
		"clouddb_replica_set_info",
		"clouddb_replica_set_status",
		"clouddb_replica_set_status_changed_timestamp_seconds",
		"clouddb_replica_set_nodes",
		"clouddb_replica_set_cpu_cores",
		"clouddb_replica_set_memory_bytes",
		"clouddb_replica_set_connection_pooler_enabled",
	)
}
