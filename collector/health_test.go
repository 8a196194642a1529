package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// TestProjectDownCause: the cause of a project that is down is a state set
// beside clouddb_up, all 0 while it is up, absent before the first answer.
func TestProjectDownCause(t *testing.T) {
	set := func(current string) string {
		var b strings.Builder
		for _, c := range fleet.AccessCauses {
			v := "0"
			if c == current {
				v = "1"
			}
			b.WriteString(`clouddb_project_down_cause{cause="` + c + `",project_id="p"} ` + v + "\n")
		}
		return b.String()
	}
	head := "# HELP clouddb_project_down_cause " + projectDownCauseDesc.help + "\n# TYPE clouddb_project_down_cause gauge\n"
	for _, tc := range []struct {
		name   string
		access fleet.Access
		want   string
	}{
		{"unknown", fleet.Access{}, ""},
		{"up", fleet.Access{Known: true, Up: true}, head + set("")},
		{"credentials", fleet.Access{Known: true, Cause: fleet.CauseCredentials}, head + set("credentials")},
		{"unreachable", fleet.Access{Known: true, Cause: fleet.CauseUnreachable}, head + set("unreachable")},
	} {
		c := NewFleetCollectorOf(&fleet.Snapshot{ProjectID: "p", Access: tc.access})
		if err := testutil.CollectAndCompare(c, strings.NewReader(tc.want), "clouddb_project_down_cause"); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestProjectDownCauseNamesEveryCause: a project down for a slow or a cut
// answer (the causes the poller logs as timeout and truncated) exported no
// cause at all, all 0 beside clouddb_up 0, and CloudDBProjectDown said
// "the cause is not exported". Every cause AccessOf gives is one of the set.
func TestProjectDownCauseNamesEveryCause(t *testing.T) {
	for _, cause := range []string{fleet.CauseCredentials, fleet.CausePermission, fleet.CauseNotFound,
		fleet.CauseUnreachable, fleet.CauseTimeout, fleet.CauseTruncated, fleet.CauseError} {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(NewFleetCollectorOf(&fleet.Snapshot{ProjectID: "p", Access: fleet.Access{Known: true, Cause: cause}}))
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var ones []string
		for _, mf := range mfs {
			if mf.GetName() != "clouddb_project_down_cause" {
				continue
			}
			for _, m := range mf.GetMetric() {
				if m.GetGauge().GetValue() == 1 {
					for _, l := range m.GetLabel() {
						if l.GetName() == "cause" {
							ones = append(ones, l.GetValue())
						}
					}
				}
			}
		}
		if len(ones) != 1 || ones[0] != cause {
			t.Errorf("a project down for %s: causes at 1 %v, want [%s]", cause, ones, cause)
		}
	}
}
