package e2e

import (
	"strconv"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestUsageFollowsReplacedNode: after the simulator replaces a service's
// primary (ordinal 0 gone, a new ordinal after the others), the exporter's
// usage nodes for that service follow: the departed ordinal's series go,
// the new one's come, and their number is clouddb_service_resources again,
// what CloudDBServiceUsageMissing compares.
func TestUsageFollowsReplacedNode(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	_, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.usage.interval=2s", "--collect.usage.series=system_memory_total_bytes", "--no-rightsizing")...)
	var id string
	var last map[string]bool
	testbin.WaitFor(t, 60*time.Second, "a service with replicas reporting every node", func() bool {
		fams := scrapeFams(t, url)
		for sid, ordinals := range usageNodes(fams["clouddb_service_system_memory_total_bytes"]) {
			if len(ordinals) > 1 && ordinals["0"] && float64(len(ordinals)) == value(t, fams, "clouddb_service_resources", "service_id", sid) {
				id = sid
				return true
			}
		}
		return false
	})
	sim.ReplaceNode(t, id)
	defer func() {
		if t.Failed() {
			t.Logf("service %s: last nodes %v", id, last)
		}
	}()
	testbin.WaitFor(t, 60*time.Second, "the replaced node's series to go and the new one's to come", func() bool {
		fams := scrapeFams(t, url)
		last = usageNodes(fams["clouddb_service_system_memory_total_bytes"])[id]
		want := int(value(t, fams, "clouddb_service_resources", "service_id", id))
		if last["0"] || len(last) != want {
			return false
		}
		for i := 1; i <= want; i++ {
			if !last[strconv.Itoa(i)] {
				return false
			}
		}
		return true
	})
}
