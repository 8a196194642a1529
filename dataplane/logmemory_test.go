package dataplane

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
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
	with := &logCounting{window: time.Minute}
	before := liveHeap()
	for i := range kept {
		kept[i] = newLogCursor("svc", boundary)
		kept[i].count(entries, until, false, with)
	}
	perEntry := float64(liveHeap()-before) / (cursors * perRead)
	t.Logf("the cursors keep %.1f bytes per entry of their window", perEntry)
	if n := len(kept[0].recent); n != perRead {
		t.Fatalf("%d entries kept, want %d", n, perRead)
	}
	if size := unsafe.Sizeof(entryAt{}); size != 12 {
		t.Errorf("an entry of the window is %d bytes, want 12", size)
	}
	// The cursor and its counts come on top, 2.5 bytes an entry.
	if perEntry > 15 {
		t.Errorf("the cursors keep %.1f bytes per entry of their window, want at most 15", perEntry)
	}
	runtime.KeepAlive(kept)
}

// TestLogCursorCountsInArrays: a cursor's counts by severity are an array
// and a bit each, not two maps by name (about 600 bytes a service, 6 MB
// at 10,000), and every severity has its place. The cursor holds its
// times as Unix ns and its counts apart, shared with the publishes: 64
// bytes (72 with its window, which is its reader's), and 160 with its
// counts of 32 bits and id (224 with float64 counts, 128 bytes a copy;
// 352 before, two arrays of counts and three time.Time inside, and the
// publishes' own copies besides).
func TestLogCursorCountsInArrays(t *testing.T) {
	for _, sev := range append(slices.Clone(logSeverities), SeverityOther) {
		if LogSeverityIndex(sev) < 0 {
			t.Fatalf("severity %s has no place in LogSeverities", sev)
		}
	}
	if numSeverities > 16 {
		t.Fatalf("%d severities, more than a bit each of a uint16", numSeverities)
	}
	// Enough that what the package's other tests free or keep meanwhile
	// (a kilobyte moved it past the bound at 1,000) is under a byte each.
	const cursors = 20000
	boundary := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kept := make([]*logCursor, cursors)
	before := liveHeap()
	for i := range kept {
		kept[i] = newLogCursor("svc", boundary)
		kept[i].add("ERROR")
		kept[i].add("BOGUS")
		kept[i].settle()
	}
	perCursor := float64(liveHeap()-before) / cursors
	t.Logf("a cursor keeps %.0f bytes", perCursor)
	if size := unsafe.Sizeof(logCursor{}); size > 64 {
		t.Errorf("a cursor is %d bytes, want at most 64 (a size class)", size)
	}
	if size := unsafe.Sizeof(ServiceLogs{}); size > 80 {
		t.Errorf("a service's counts are %d bytes, want at most 80 (a size class)", size)
	}
	if perCursor > 165 {
		t.Errorf("a cursor keeps %.0f bytes, want at most 165", perCursor)
	}
	runtime.KeepAlive(kept)
}

// TestLogsReaderKeepsFewBytesPerService: what the log reader keeps for a
// service between reads, its cursor and the late window of a service
// writing 40 entries a minute (the simulator's average is about 45), read
// every minute: 1,040 bytes before (a 352-byte cursor, 16-byte entries),
// 736 with the counts the publishes share, 672 now that those are 32 bits
// each and the window is the reader's.
func TestLogsReaderKeepsFewBytesPerService(t *testing.T) {
	const cursors, perMinute, reads = 2000, 40, 4
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	kept := make([]*logCursor, cursors)
	with := &logCounting{window: time.Minute}
	before := liveHeap()
	for i := range kept {
		kept[i] = newLogCursor("svc", start)
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
			c.count(entries, until, false, with)
		}
	}
	perService := float64(liveHeap()-before) / cursors
	t.Logf("the log reader keeps %.0f bytes a service", perService)
	if n := len(kept[0].recent); n != perMinute+1 {
		t.Fatalf("%d entries kept, want %d", n, perMinute+1)
	}
	if perService > 680 {
		t.Errorf("the log reader keeps %.0f bytes a service, want at most 680", perService)
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
	c := newLogCursor("svc", boundary)
	with := &logCounting{window: time.Minute}
	c.count(entries, until, false, with)
	if allocs := testing.AllocsPerRun(10, func() { c.count(entries, until, false, with) }); allocs != 0 {
		t.Errorf("counting a read again made %.0f allocations, want none", allocs)
	}
	if n, _ := c.counts.Count(LogSeverityIndex("LOG")); n != perRead {
		t.Errorf("%g entries counted, want %d", n, perRead)
	}
	if size := unsafe.Sizeof(readEntry{}); size > 16 {
		t.Errorf("an entry read is %d bytes, want at most 16", size)
	}
}

// TestServiceLogsCloneIsApart: a copy of the counts changes apart from its
// original, whether its counts are 32 bits or not.
func TestServiceLogsCloneIsApart(t *testing.T) {
	id := "svc"
	for _, sev := range LogSeverities {
		for _, n := range []float64{1, 1 << 40} {
			i := LogSeverityIndex(sev)
			s := NewServiceLogs(&id)
			s.Set(i, n)
			c := s.Clone()
			c.Set(i, n+1)
			if got, ok := s.Count(i); got != n || !ok {
				t.Errorf("%s: the original holds %g (%v) after its copy changed, want %g", sev, got, ok, n)
			}
			if got, ok := c.Count(i); got != n+1 || !ok {
				t.Errorf("%s: the copy holds %g (%v), want %g", sev, got, ok, n+1)
			}
			if s.Equal(c) {
				t.Errorf("%s: %v equals %v", sev, s, c)
			}
			for _, other := range LogSeverities {
				if j := LogSeverityIndex(other); j != i {
					if got, ok := c.Count(j); got != 0 || ok {
						t.Errorf("%s: %s holds %g (%v), want none", sev, other, got, ok)
					}
				}
			}
			c.Set(i, n)
			if !s.Equal(c) {
				t.Errorf("%s: %v does not equal %v", sev, s, c)
			}
		}
	}
}

// TestServiceLogsHoldAnyValue: counts are held in 32 bits while they fit,
// and any value set, even one a positions file held, reads back as it was.
func TestServiceLogsHoldAnyValue(t *testing.T) {
	id := "svc"
	values := []float64{0, 1, math.MaxUint32, math.MaxUint32 + 1, 1 << 53, 1.5, -1, math.Copysign(0, -1), math.Inf(1), 1e300}
	for _, n := range values {
		s := NewServiceLogs(&id)
		s.Set(LogSeverityIndex("LOG"), 7)
		s.Set(LogSeverityIndex("ERROR"), n)
		if got, _ := s.Count(LogSeverityIndex("ERROR")); got != n || math.Signbit(got) != math.Signbit(n) {
			t.Errorf("set %g, read %g", n, got)
		}
		if got, _ := s.Count(LogSeverityIndex("LOG")); got != 7 {
			t.Errorf("after %g, LOG holds %g, want 7", n, got)
		}
		c := NewServiceLogs(&id)
		c.Set(LogSeverityIndex("ERROR"), n)
		c.Set(LogSeverityIndex("LOG"), 7)
		if !s.Equal(c) || !c.Equal(s) {
			t.Errorf("%v and %v are not equal", s, c)
		}
	}
	if n, ok := NewServiceLogs(&id).Count(LogSeverityIndex("ERROR")); n != 0 || ok {
		t.Errorf("no count holds %g (%v)", n, ok)
	}
}

// BenchmarkLogsReaderMemory reports what the log reader and its last
// publish keep a service while a read goes on (kept_bytes/service): the
// cursors of N services that write 40 entries a minute, read every
// minute, each read again since the publish, which holds the counts of
// before.
func BenchmarkLogsReaderMemory(b *testing.B) {
	const reads = 3
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			host := newFakeHost(n)
			opts := Options{Collect: withReader(config.Collect{Interval: 20 * time.Second}, logsKey, logsSettings{Enabled: true, Interval: time.Minute})}
			var kept float64
			for range b.N {
				before := liveHeap()
				l := newLogsReader(newRunner(host, opts, PartLogs, time.Minute), nil)
				for _, svc := range host.services {
					l.cursors[svc.ServiceID] = newLogCursor(svc.ServiceID, start)
				}
				var published *Logs
				for r := range reads + 1 {
					if r > 0 {
						published = l.build()
					}
					countMinute(l, start, r)
				}
				kept += float64(liveHeap()-before) / float64(n)
				runtime.KeepAlive(published)
				runtime.KeepAlive(l)
			}
			b.ReportMetric(kept/float64(b.N), "kept_bytes/service")
		})
	}
}
