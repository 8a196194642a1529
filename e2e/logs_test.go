package e2e

import (
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestLogsCounterIsExact: the log counter counts each entry once across
// pages (1,201 entries at one timestamp: three pages) and reads, with late
// entries arriving at exactly the boundary timestamp.
func TestLogsCounterIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim, id := quietOrdersDB(t)
	_, url := testbin.StartExporter(t, sim.Env(), "--collect.logs", "--collect.min-data-interval=1s", "--collect.logs.interval=1s",
		"--collect.logs.service-name-regex=orders-db", "--api.rate-limit=1000")
	counter := func(severity string) func() bool {
		return func() bool {
			_, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_log_entries_total", "service_id", id, "severity", severity)
			return ok
		}
	}
	testbin.WaitFor(t, 60*time.Second, "the first log read", counter("ERROR"))

	batch := make([]map[string]string, 0, 1203)
	for range 1201 {
		batch = append(batch, map[string]string{"severity": "ERROR", "message": "duplicate key"})
	}
	batch = append(batch, map[string]string{"severity": "FATAL", "message": "terminating"}, map[string]string{"severity": "FATAL", "message": "terminating"})
	sim.AddLogEntries(t, id, batch, -1) // all at the simulator's now: one timestamp
	metric := url + "/metrics"
	testbin.WaitFor(t, 60*time.Second, "1,201 ERROR entries", testbin.MetricEquals(metric, "clouddb_service_log_entries_total", 1201, "service_id", id, "severity", "ERROR"))
	testbin.WaitFor(t, 10*time.Second, "2 FATAL entries", testbin.MetricEquals(metric, "clouddb_service_log_entries_total", 2, "service_id", id, "severity", "FATAL"))

	// Late arrivals at exactly the boundary's timestamp, and a newer one.
	var page struct {
		Entries []struct {
			Timestamp string `json:"timestamp"`
		} `json:"entries"`
	}
	sim.APIGet(t, "/projects/"+sim.Project+"/services/"+id+"/logs?severities=FATAL", &page)
	if len(page.Entries) != 2 {
		t.Fatalf("the simulator has %d FATAL entries", len(page.Entries))
	}
	boundary := page.Entries[0].Timestamp
	late := []map[string]string{
		{"timestamp": boundary, "severity": "ERROR", "message": "duplicate key"},
		{"timestamp": boundary, "severity": "ERROR", "message": "duplicate key"},
		{"timestamp": boundary, "severity": "PANIC", "message": "late"},
	}
	sim.AddLogEntries(t, id, late, -1)
	sim.AddLogEntries(t, id, []map[string]string{{"severity": "WARNING", "message": "newer"}}, -1)
	testbin.WaitFor(t, 60*time.Second, "the newer WARNING", testbin.MetricEquals(metric, "clouddb_service_log_entries_total", 1, "service_id", id, "severity", "WARNING"))
	// Several more reads: the counts stay exact.
	waitSuccesses(t, url, "logs", 3, "a log read")
	fams := scrapeFams(t, url)
	for severity, want := range map[string]float64{"ERROR": 1203, "FATAL": 2, "PANIC": 1, "WARNING": 1, "LOG": 0} {
		if got := value(t, fams, "clouddb_service_log_entries_total", "service_id", id, "severity", severity); got != want {
			t.Errorf("%s: %v entries counted, want %v", severity, got, want)
		}
	}
	if got := value(t, fams, "clouddb_exporter_log_pages_truncated_total"); got != 0 {
		t.Errorf("%v truncated reads", got)
	}
}

// TestLogsPageCapSkipped: 1,201 entries in one burst against a page cap of
// one page: 500 are counted, the read is counted as truncated, and the
// page after the cap says that at least 500 more were left
// (clouddb_exporter_log_entries_skipped_total{reason="page_cap"}), where
// before only the truncated read was counted.
func TestLogsPageCapSkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim, id := quietOrdersDB(t)
	_, url := testbin.StartExporter(t, sim.Env(), "--collect.logs", "--collect.min-data-interval=1s", "--collect.logs.interval=1s",
		"--collect.logs.service-name-regex=orders-db", "--collect.logs.max-pages=1", "--api.rate-limit=1000")
	metric := url + "/metrics"
	testbin.WaitFor(t, 60*time.Second, "the first log read", func() bool {
		_, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_log_entries_total", "service_id", id, "severity", "ERROR")
		return ok
	})
	batch := make([]map[string]string, 1201)
	for i := range batch {
		batch[i] = map[string]string{"severity": "ERROR", "message": "burst"}
	}
	sim.AddLogEntries(t, id, batch, -1)
	testbin.WaitFor(t, 60*time.Second, "500 skipped at the page cap", testbin.MetricEquals(metric, "clouddb_exporter_log_entries_skipped_total", 500, "reason", "page_cap"))
	fams := scrapeFams(t, url)
	if got := value(t, fams, "clouddb_service_log_entries_total", "service_id", id, "severity", "ERROR"); got != 500 {
		t.Errorf("%v ERROR entries counted, want the 500 of the page the cap allows", got)
	}
	if got := value(t, fams, "clouddb_exporter_log_pages_truncated_total"); got != 1 {
		t.Errorf("%v truncated reads, want 1", got)
	}
}
