package dataplane

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestLogCursorKeepsFewBytesPerEntry: a cursor keeps each entry of its
// late window as 12 bytes in a sorted list, not as a map entry (some 40
// bytes with the map's slack: 25 MB at 10,000 services, the largest
// holder of the data plane), nor as 16 bytes, cloned after each read
// (18.5 bytes an entry with the cursor).
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
		kept[i] = newLogCursor("svc", boundary, time.Minute)
		kept[i].count(entries, until, false, nil)
	}
	perEntry := float64(liveHeap()-before) / (cursors * perRead)
	if n := len(kept[0].recent); n != perRead {
		t.Fatalf("%d entries kept, want %d", n, perRead)
	}
	if size := unsafe.Sizeof(entryAt{}); size != 12 {
		t.Errorf("an entry of the window is %d bytes, want 12", size)
	}
	// The cursor comes on top, 3 bytes an entry.
	if perEntry > 16 {
		t.Errorf("the cursors keep %.1f bytes per entry of their window, want at most 16", perEntry)
	}
	runtime.KeepAlive(kept)
}

// TestLogCursorCountsInArrays: a cursor's counts by severity are an array
// and a bit each, not two maps by name (about 600 bytes a service, 6 MB
// at 10,000), and every severity has its place. The cursor holds its
// times as Unix ns and its counts apart, shared with the publishes: 72
// bytes, and 224 with its counts and id (352 before, two arrays of counts
// and three time.Time inside, and the publishes' own copies besides).
func TestLogCursorCountsInArrays(t *testing.T) {
	for _, sev := range append(slices.Clone(logSeverities), SeverityOther) {
		if LogSeverityIndex(sev) < 0 {
			t.Fatalf("severity %s has no place in LogSeverities", sev)
		}
	}
	if numSeverities > 16 {
		t.Fatalf("%d severities, more than a bit each of a uint16", numSeverities)
	}
	const cursors = 1000
	boundary := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kept := make([]*logCursor, cursors)
	before := liveHeap()
	for i := range kept {
		kept[i] = newLogCursor("svc", boundary, time.Minute)
		kept[i].add("ERROR")
		kept[i].add("BOGUS")
		kept[i].settle()
	}
	perCursor := float64(liveHeap()-before) / cursors
	if size := unsafe.Sizeof(logCursor{}); size > 80 {
		t.Errorf("a cursor is %d bytes, want at most 80 (a size class)", size)
	}
	if perCursor > 240 {
		t.Errorf("a cursor keeps %.0f bytes, want at most 240", perCursor)
	}
	runtime.KeepAlive(kept)
}

// TestLogsReaderKeepsFewBytesPerService: what the log reader keeps for a
// service between reads, its cursor and the late window of a service
// writing 40 entries a minute (the simulator's average is about 45), read
// every minute: 1,040 bytes before (a 352-byte cursor, 16-byte entries),
// about 740 now with the counts the publishes share.
func TestLogsReaderKeepsFewBytesPerService(t *testing.T) {
	const cursors, perMinute, reads = 2000, 40, 4
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kept := make([]*logCursor, cursors)
	before := liveHeap()
	for i := range kept {
		kept[i] = newLogCursor("svc", start, time.Minute)
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
	if n := len(kept[0].recent); n != perMinute+1 {
		t.Fatalf("%d entries kept, want %d", n, perMinute+1)
	}
	if perService > 760 {
		t.Errorf("the log reader keeps %.0f bytes a service, want at most 760", perService)
	}
	runtime.KeepAlive(kept)
}

// TestLogCursorCountReusesItsBuffers: a read the cursor has counted before
// (the API sends the window again) allocates nothing: the entries it
// takes are sorted in a buffer kept from read to read, as the merge is
// (a new list a read was 143 MB allocated in 11 minutes at 10,000
// services).
func TestLogCursorCountReusesItsBuffers(t *testing.T) {
	const perRead = 64
	boundary := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	until := boundary.Add(time.Minute)
	entries := make([]apiclient.LogEntry, perRead)
	for i := range entries {
		entries[i] = apiclient.LogEntry{Timestamp: apiclient.Time{Time: until.Add(-time.Duration(i) * time.Second / 2)}, Severity: "LOG", Message: fmt.Sprint("m", i)}
	}
	c := newLogCursor("svc", boundary, time.Minute)
	var scratch countScratch
	c.count(entries, until, false, &scratch)
	if allocs := testing.AllocsPerRun(10, func() { c.count(entries, until, false, &scratch) }); allocs != 0 {
		t.Errorf("counting a read again made %.0f allocations, want none", allocs)
	}
	if n, _ := c.counts.Count(LogSeverityIndex("LOG")); n != perRead {
		t.Errorf("%g entries counted, want %d", n, perRead)
	}
	if size := unsafe.Sizeof(readEntry{}); size > 16 {
		t.Errorf("an entry read is %d bytes, want at most 16", size)
	}
}
