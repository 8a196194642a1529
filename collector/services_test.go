package collector

import "testing"

func TestServiceMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "services.prom",
		"clouddb_service_info",
		"clouddb_service_status",
		"clouddb_service_paused",
		"clouddb_service_created_timestamp_seconds",
		"clouddb_service_status_changed_timestamp_seconds",
		"clouddb_service_resources",
		"clouddb_service_cpu_cores",
		"clouddb_service_memory_bytes",
		"clouddb_service_volume_info",
		"clouddb_service_connection_pooler_enabled",
	)
}
