package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/fleet"
)

func TestHealthMetrics(t *testing.T) {
	compareCollectorGolden(t, NewFleetCollectorOf(testSnapshots()...), "health.prom",
		"clouddb_exporter_collector_success",
		"clouddb_exporter_collector_duration_seconds",
		"clouddb_exporter_collector_last_success_timestamp_seconds",
		"clouddb_exporter_snapshot_timestamp_seconds",
	)
}

// TestSnapshotTimestampIsTheDataTime: clouddb_exporter_snapshot_timestamp_seconds
// is when the newest data was read (Read), not when the snapshot was
// assembled (Taken), which advances during an outage too; 0 before any
// read succeeded, so that its age is as large as it gets.
func TestSnapshotTimestampIsTheDataTime(t *testing.T) {
	taken := time.Date(2025, 3, 1, 12, 10, 0, 0, time.UTC)
	read := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		read time.Time
		want string
	}{{read, "1.7408304e+09"}, {time.Time{}, "0"}} {
		c := NewFleetCollectorOf(&fleet.Snapshot{ProjectID: "p", Taken: taken, Read: tc.read})
		want := `# HELP clouddb_exporter_snapshot_timestamp_seconds ` + snapshotTimestampDesc.help + `
# TYPE clouddb_exporter_snapshot_timestamp_seconds gauge
clouddb_exporter_snapshot_timestamp_seconds{project_id="p"} ` + tc.want + "\n"
		if err := testutil.CollectAndCompare(c, strings.NewReader(want), "clouddb_exporter_snapshot_timestamp_seconds"); err != nil {
			t.Errorf("read %v: %v", tc.read, err)
		}
	}
}
