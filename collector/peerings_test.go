package collector

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPeeringMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "peerings.prom",
		"clouddb_vpc_peering_info",
		"clouddb_vpc_peering_status",
		"clouddb_vpc_peering_status_changed_timestamp_seconds",
		"clouddb_vpc_peering_error",
		"clouddb_vpc_peering_error_info",
	)
}

func TestPeeringMessage(t *testing.T) {
	long := strings.Repeat("route table conflict ", 20) // 420 bytes
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "route table conflict", "route table conflict"},
		{"white space and controls", "  route\ttable\r\nconflict\x00 \x1b[31m ", "route table conflict [31m"},
		{"invalid UTF-8", "bad \xff byte", "bad \uFFFD byte"},
		{"exactly the limit", strings.Repeat("a", maxPeeringMessage), strings.Repeat("a", maxPeeringMessage)},
		{"long", long, strings.TrimRight(long[:maxPeeringMessage-3], " ") + "..."},
		// A two-byte character straddling the cut is dropped whole.
		{"multi-byte at the cut", strings.Repeat("a", maxPeeringMessage-4) + "éé" + "tail", strings.Repeat("a", maxPeeringMessage-4) + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := peeringMessage(tc.in)
			if got != tc.want {
				t.Errorf("peeringMessage(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if len(got) > maxPeeringMessage || !utf8.ValidString(got) {
				t.Errorf("peeringMessage(%q) = %q: %d bytes or invalid UTF-8", tc.in, got, len(got))
			}
		})
	}
}
