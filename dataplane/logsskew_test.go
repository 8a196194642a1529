package dataplane

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
)

// TestLogsCountInTheAPIClock: an API whose clock is ten minutes behind
// stamps its entries ten minutes in the past; the reads ask for and
// compare times in its clock (the skew its Date header gives), so every
// entry counts: before, none did, with no counter nor log line.
func TestLogsCountInTheAPIClock(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	h.host.skew = -10 * time.Minute
	id := "svc00"
	h.tick() // the service first seen: counting starts
	for range 3 {
		h.fl.add(id, h.clock.Now().Add(h.host.skew-time.Second), "ERROR", "e", 10)
		h.tick()
	}
	if n := count(h.tick(), id, "ERROR"); n != 30 {
		t.Errorf("%v ERROR entries counted of 30 stamped in the API's clock", n)
	}
}

// TestLogsSkippedOutsideTheWindow: entries an API sends from before the
// read's window (its since filter, or its clock, off) are not counted,
// and counted as skipped for the clock's skew, with one WARN. Each read
// stops at its first page that reaches before its window: one old entry
// comes with the new ones in each of the two reads here.
func TestLogsSkippedOutsideTheWindow(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	id := "svc00"
	h.tick()
	h.fl.ignoreSince = true
	h.fl.add(id, h.clock.Now().Add(-time.Hour), "FATAL", "old", 4)
	h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "new", 2)
	l := h.tick()
	if count(l, id, "FATAL") != 0 || count(l, id, "ERROR") != 2 {
		t.Errorf("counts %v, want the 2 new ERRORs only", l.Counts)
	}
	h.tick()
	c := collectortest.NewFleetCollectorOf(&fleet.Snapshot{ProjectID: "p1", Data: map[string]any{PartLogs: logsOf(h.host.Snapshot())}})
	want := "# HELP clouddb_exporter_log_entries_skipped_total " + logEntriesSkippedDesc.Help() + "\n# TYPE clouddb_exporter_log_entries_skipped_total counter\n" +
		`clouddb_exporter_log_entries_skipped_total{project_id="p1",reason="clock_skew"} 2` + "\n" +
		`clouddb_exporter_log_entries_skipped_total{project_id="p1",reason="page_cap"} 0` + "\n" +
		`clouddb_exporter_log_entries_skipped_total{project_id="p1",reason="start"} 0` + "\n"
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "clouddb_exporter_log_entries_skipped_total"); err != nil {
		t.Error(err)
	}
	if n := strings.Count(h.logs.String(), "stamped before the read's window"); n != 1 {
		t.Errorf("%d WARN lines, want 1:\n%s", n, h.logs)
	}
}
