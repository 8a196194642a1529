package e2e

import (
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// waitSuccesses waits until it has seen n successful reads of collector
// (services, usage, logs) at url, each a newer
// clouddb_exporter_collector_last_success_timestamp_seconds: the newest
// at the call counts as the first, so n-1 more reads end after it.
func waitSuccesses(t *testing.T, url, collector string, n int, what string) {
	t.Helper()
	last := 0.0
	for range n {
		testbin.WaitFor(t, 30*time.Second, what, func() bool {
			v, ok := testbin.Value(scrapeFams(t, url), "clouddb_exporter_collector_last_success_timestamp_seconds", "collector", collector)
			if ok && v > last {
				last = v
				return true
			}
			return false
		})
	}
}
