package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestLogsStateFileResumes: with --collect.logs.state-file, the entries
// written while the exporter was stopped are counted after its restart
// and the counter goes on from its value before: N entries, a SIGTERM, M
// more while down, a start again: the counter is N+M, its increase across
// the restart M.
func TestLogsStateFileResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim, id := quietOrdersDB(t)
	state := filepath.Join(t.TempDir(), "log-positions.json")
	args := []string{"--collect.logs", "--collect.min-data-interval=1s", "--collect.logs.interval=1s",
		"--collect.logs.service-name-regex=orders-db", "--api.rate-limit=1000", "--collect.logs.state-file=" + state}
	name, labels := "clouddb_service_log_entries_total", []string{"service_id", id, "severity", "ERROR"}
	entries := func(n int) []map[string]string {
		var out []map[string]string
		for range n {
			out = append(out, map[string]string{"severity": "ERROR", "message": "duplicate key"})
		}
		return out
	}

	p, url := testbin.StartExporter(t, sim.Env(), args...)
	testbin.WaitFor(t, 60*time.Second, "the first log read", testbin.MetricEquals(url+"/metrics", name, 0, labels...))
	sim.AddLogEntries(t, id, entries(5), -1)
	testbin.WaitFor(t, 60*time.Second, "5 ERROR entries", testbin.MetricEquals(url+"/metrics", name, 5, labels...))
	if code := p.Stop(t); code != 0 {
		t.Fatalf("the exporter exited %d on SIGTERM:\n%s", code, p.Output())
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("no state file after the shutdown: %v\n%s", err, p.Output())
	}

	sim.AddLogEntries(t, id, entries(3), -1) // while the exporter is down
	p2, url2 := testbin.StartExporter(t, sim.Env(), args...)
	testbin.WaitFor(t, 60*time.Second, "5+3 ERROR entries", testbin.MetricEquals(url2+"/metrics", name, 8, labels...))
	// A few reads later the count is the same: nothing counted twice.
	waitSuccesses(t, url2, "logs", 3, "a log read")
	fams := scrapeFams(t, url2)
	if got := value(t, fams, name, labels...); got != 8 {
		t.Errorf("ERROR counter %v after the restart, want 8", got)
	}
	if got := value(t, fams, "clouddb_exporter_log_skipped_seconds_total"); got != 0 {
		t.Errorf("%vs skipped on resume, want 0", got)
	}
	if out := p2.Output(); !strings.Contains(out, "Log state file read") || strings.Contains(out, "refused") {
		t.Errorf("the restart did not resume from the file:\n%s", out)
	}
}
