package dataplane

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestLogCursorKeepsFewBytesPerEntry: a cursor keeps each entry of its
// late window as 16 bytes in a sorted list, not as a map entry (some 40
// bytes with the map's slack: 25 MB at 10,000 services, the largest
// holder of the data plane).
func TestLogCursorKeepsFewBytesPerEntry(t *testing.T) {
	const cursors, perRead = 400, 64
	boundary := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	until := boundary.Add(time.Minute)
	entries := make([]apiclient.LogEntry, perRead)
	for i := range entries {
		entries[i] = apiclient.LogEntry{Timestamp: apiclient.Time{Time: until.Add(-time.Duration(i) * time.Second / 2)}, Severity: "LOG", Message: fmt.Sprint("m", i)}
	}
	kept := make([]*logCursor, cursors)
	before := liveHeap()
	for i := range kept {
		kept[i] = newLogCursor(boundary, time.Minute)
		kept[i].count(entries, until, false, nil)
	}
	perEntry := float64(liveHeap()-before) / (cursors * perRead)
	t.Logf("%.1f bytes per entry", perEntry)
	if n := len(kept[0].recent); n != perRead {
		t.Fatalf("%d entries kept, want %d", n, perRead)
	}
	// The counts' maps come on top, a few bytes an entry.
	if perEntry > 28 {
		t.Errorf("the cursors keep %.1f bytes per entry of their window, want at most 28", perEntry)
	}
	runtime.KeepAlive(kept)
}

// TestLogCursorCountsInArrays: a cursor's counts by severity are an array
// and a bit each, not two maps by name (about 600 bytes a service, 6 MB
// at 10,000), and every severity has its place.
func TestLogCursorCountsInArrays(t *testing.T) {
	if len(severityNames) != numSeverities {
		t.Fatalf("%d severities, numSeverities %d", len(severityNames), numSeverities)
	}
	const cursors = 1000
	boundary := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kept := make([]*logCursor, cursors)
	before := liveHeap()
	for i := range kept {
		kept[i] = newLogCursor(boundary, time.Minute)
		kept[i].add("ERROR")
		kept[i].add("BOGUS")
		kept[i].settle()
	}
	perCursor := float64(liveHeap()-before) / cursors
	t.Logf("%.0f bytes a cursor, unsafe.Sizeof %d", perCursor, unsafe.Sizeof(logCursor{}))
	if perCursor > 400 {
		t.Errorf("a cursor keeps %.0f bytes, want at most 400", perCursor)
	}
	runtime.KeepAlive(kept)
}

// TestLogsReaderKeepsFewBytesPerService: what the log reader keeps for a
// service between reads, its cursor and the late window of a service
// writing 40 entries a minute read every minute (the simulator's average),
// after the reads have settled: 1,100 bytes before the cursor held its
// times as Unix ns and trimmed its window in place.
func TestLogsReaderKeepsFewBytesPerService(t *testing.T) {
	const cursors, perMinute, reads = 2000, 40, 4
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kept := make([]*logCursor, cursors)
	before := liveHeap()
	for i := range kept {
		kept[i] = newLogCursor(start, time.Minute)
	}
	for r := range reads {
		until := start.Add(time.Duration(r+1) * time.Minute)
		entries := make([]apiclient.LogEntry, perMinute)
		for j := range entries {
			ts := until.Add(-time.Duration(j) * time.Minute / perMinute)
			entries[j] = apiclient.LogEntry{Timestamp: apiclient.Time{Time: ts}, Severity: logSeverities[j%7], Message: fmt.Sprint("m", r, j)}
		}
		for _, c := range kept {
			c.settle()
			c.count(entries, until, false, nil)
		}
	}
	perService := float64(liveHeap()-before) / cursors
	t.Logf("%.0f bytes a service, %d entries in its window", perService, len(kept[0].recent))
	if n := len(kept[0].recent); n != perMinute+1 {
		t.Fatalf("%d entries kept, want %d", n, perMinute+1)
	}
	if perService > 700 {
		t.Errorf("the log reader keeps %.0f bytes a service, want at most 700", perService)
	}
	runtime.KeepAlive(kept)
}
