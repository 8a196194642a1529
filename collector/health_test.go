package collector

import "testing"

func TestHealthMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "health.prom",
		"clouddb_exporter_collector_success",
		"clouddb_exporter_collector_duration_seconds",
		"clouddb_exporter_collector_last_success_timestamp_seconds",
		"clouddb_exporter_snapshot_timestamp_seconds",
	)
}
