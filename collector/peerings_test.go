package collector

import "testing"

func TestPeeringMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "peerings.prom",
		"clouddb_vpc_peering_info",
		"clouddb_vpc_peering_status",
		"clouddb_vpc_peering_status_changed_timestamp_seconds",
		"clouddb_vpc_peering_error",
	)
}
