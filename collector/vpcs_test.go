package collector

import "testing"

func TestVPCMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "vpcs.prom",
		"clouddb_vpc_info",
	)
}
