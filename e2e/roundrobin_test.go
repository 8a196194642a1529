package e2e

import (
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestPollingRoundRobinPastTransitions: the first revision's demo at a 1s
// interval and the default rate limit leaves two calls a cycle for nine
// per-parent lists, and two of the parents (the long CONFIGURING service
// and the VPC with a pending peering) stay in transition for half an hour.
// The round-robin still reaches every other parent: the replica sets of the
// settled services show up. Before, the two transitional parents took the
// free calls every cycle and no replica set was ever read.
func TestPollingRoundRobinPastTransitions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t, "--api.revision=2024"))
	var want []string
	for _, id := range sim.ServiceIDs(t) {
		var rs []struct {
			ID string `json:"id"`
		}
		sim.APIGet(t, "/projects/"+sim.Project+"/services/"+id+"/replicaSets", &rs)
		for _, r := range rs {
			want = append(want, r.ID)
		}
	}
	if len(want) == 0 {
		t.Fatal("the demo has no replica set: the test proves nothing")
	}
	_, url := startPolling(t, sim, "--collect.interval=1s")
	testbin.WaitFor(t, 60*time.Second, "every replica set of the demo on /metrics", func() bool {
		fams, ok := scrape(url)
		if !ok {
			return false
		}
		got := map[string]bool{}
		for _, id := range ids(fams, "clouddb_replica_set_info", "replica_set_id") {
			got[id] = true
		}
		for _, id := range want {
			if !got[id] {
				return false
			}
		}
		return true
	})
}
