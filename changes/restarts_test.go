package changes

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func TestRestartOncePerEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	tl := New(Options{})
	if err := tl.openFile(path, 1<<20, ""); err != nil {
		t.Fatal(err)
	}
	tl.Observe(snapAt(0, false, svc("a", "orders-db", 1000, 4)))
	at := t0.Add(90 * time.Second)
	tl.ObserveRestart("p1", "a", at)
	tl.ObserveRestart("p1", "a", at)                   // read again
	tl.ObserveRestart("p1", "a", at.Add(-time.Minute)) // an older entry, read late
	got := eventsOf(tl, Query{})
	if len(got) != 1 || got[0].Kind != KindRestarted || got[0].Source != SourceLogs || got[0].ObjectName != "orders-db" ||
		got[0].EffectiveTime == nil || !got[0].EffectiveTime.Equal(at) {
		t.Fatalf("events %+v", got)
	}
	// Across a restart with the file, the same entry is not a new restart.
	tl.Close(t.Context())
	tl = New(Options{})
	if err := tl.openFile(path, 1<<20, ""); err != nil {
		t.Fatal(err)
	}
	tl.ObserveRestart("p1", "a", at)
	tl.ObserveRestart("p1", "a", at.Add(time.Hour))
	if got := eventsOf(tl, Query{Since: 1}); len(got) != 1 || !got[0].EffectiveTime.Equal(at.Add(time.Hour)) {
		t.Errorf("after the restart: %+v", got)
	}
	// Two exporters reading one entry give it one id.
	other := New(Options{})
	other.ObserveRestart("p1", "a", at.Add(time.Hour))
	if a, b := eventsOf(tl, Query{Since: 1})[0].ID, eventsOf(other, Query{})[0].ID; a != b {
		t.Errorf("ids %s and %s", a, b)
	}
}

func TestRestartsFoundInLogEntries(t *testing.T) {
	tl := New(Options{})
	at := t0.Add(time.Minute)
	tl.ObserveLogEntries("p1", "a", []apiclient.LogEntry{
		{Timestamp: apiclient.Time{Time: t0}, Message: "database system was shut down", Severity: "LOG"},
		{Message: ReadyMessage, Severity: "LOG"}, // no time: no restart to date
		{Timestamp: apiclient.Time{Time: at}, Message: ReadyMessage, Severity: "LOG"},
	})
	got := eventsOf(tl, Query{})
	if len(got) != 1 || got[0].Kind != KindRestarted || !got[0].EffectiveTime.Equal(at) || got[0].After["ready_at"] != at.Format(time.RFC3339Nano) {
		t.Errorf("events %+v", got)
	}
}
