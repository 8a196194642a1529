package e2e

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestChangesRestartedAcrossRestart: with --changes.file and --state.file, a
// database restart logged while the exporter was down is one restarted
// event after its start (the log reader resumes from its saved position),
// and the one seen before the stop stays on the feed, once. That an entry
// read twice is one restart is tested in the changes package: the resumed
// reader does not read it again here.
func TestChangesRestartedAcrossRestart(t *testing.T) {
	t.Parallel()
	sim, id := quietOrdersDB(t)
	dir := t.TempDir()
	args := []string{"--collect.logs", "--collect.min-data-interval=1s", "--collect.logs.interval=1s",
		"--collect.logs.service-name-regex=orders-db", "--api.rate-limit=1000", "--collect.interval=1s",
		"--changes.file=" + filepath.Join(dir, "changes.ndjson"), "--state.file=" + filepath.Join(dir, "state.json")}
	ready := []map[string]string{{"severity": "LOG", "message": "database system is ready to accept connections"}}
	restarts := func(url string) []change {
		var out []change
		for _, c := range feedOf(t, url) {
			if c.ObjectID == id && c.Kind == "restarted" {
				out = append(out, c)
			}
		}
		return out
	}

	p, url := testbin.StartExporter(t, sim.Env(), args...)
	testbin.WaitFor(t, 60*time.Second, "the first log read", testbin.MetricEquals(url+"/metrics", "clouddb_service_log_entries_total", 0,
		"service_id", id, "severity", "LOG"))
	sim.AddLogEntries(t, id, ready, -1)
	first := waitChange(t, url, "service", id, "restarted")
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}

	sim.AddLogEntries(t, id, ready, -1) // while the exporter is down
	_, url = testbin.StartExporter(t, sim.Env(), args...)
	testbin.WaitFor(t, 60*time.Second, "the restart logged while down", func() bool { return len(restarts(url)) >= 2 })
	// The resumed reader counts on from the first entry.
	testbin.WaitFor(t, 60*time.Second, "the log read past both entries", testbin.MetricEquals(url+"/metrics", "clouddb_service_log_entries_total", 2,
		"service_id", id, "severity", "LOG"))
	waitCycles(t, url, 3)
	got := restarts(url)
	if len(got) != 2 || got[0].ID != first.ID || got[0].Cursor != first.Cursor || got[1].ID == first.ID {
		t.Errorf("restarts after the restart: %+v; want %+v kept and one new restart", got, first)
	}
}
