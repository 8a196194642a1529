package dataplane

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// savingReader returns a log reader of n services, each having written 40
// entries a minute (about the simulator's average) for reads minutes, and
// a state file for it in dir.
func savingReader(tb testing.TB, dir string, n, reads int) *logsReader {
	tb.Helper()
	pos, err := OpenLogPositions(filepath.Join(dir, "positions.json"), slog.New(slog.DiscardHandler), nil)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	host := newFakeHost(0)
	l := &logsReader{runner: newRunner(host, Options{Positions: pos, APIURL: testAPI}, PartLogs, time.Minute),
		cursors: map[string]*logCursor{}, counting: logCounting{window: time.Minute}}
	for i := range n {
		id := fmt.Sprintf("service-%06d", i)
		l.cursors[id] = newLogCursor(id, start)
	}
	for r := range reads {
		countMinute(l, start, r)
	}
	// The last pass's publish shares the counts, as a tick does.
	l.publishData(l.fill())
	return l
}

// countMinute has every cursor of l count minute r after start of a
// service that writes 40 entries a minute, as a log pass does.
func countMinute(l *logsReader, start time.Time, r int) {
	const perMinute = 40
	until := start.Add(time.Duration(r+1) * time.Minute)
	entries := make([]apiclient.LogEntry, perMinute)
	for j := range entries {
		ts := until.Add(-time.Duration(j) * time.Minute / perMinute)
		entries[j] = apiclient.LogEntry{Timestamp: apiclient.Time{Time: ts}, Severity: logSeverities[j%7], Message: fmt.Sprint("m", r, j)}
	}
	for _, c := range l.cursors {
		c.settle()
		c.count(entries, until, false, &l.counting)
	}
}

// TestLogPositionsKeepFewBytesPerService: what the saved positions keep
// between two log passes (a minute), a service's boundary, read time,
// boundary entries and counts. They were a map by service of two maps each
// (counts by severity name, boundary entries by hex key): about 1,200 B a
// service, 12 MB at 10,000 services, always live, and as much again while
// the next pass's were made.
func TestLogPositionsKeepFewBytesPerService(t *testing.T) {
	const services = 2000
	l := savingReader(t, t.TempDir(), services, 3)
	before := liveHeap()
	l.savePositions()
	perService := float64(liveHeap()-before) / services
	t.Logf("the saved positions keep %.0f bytes a service", perService)
	if perService > 100 {
		t.Errorf("the saved positions keep %.0f bytes a service, want at most 100", perService)
	}
	runtime.KeepAlive(l)
}

// BenchmarkLogPositions: a log pass's save and a write of the state file
// at N services (save_bytes and write_bytes are what each allocates,
// kept_bytes/service what the saved positions keep live).
func BenchmarkLogPositions(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			l := savingReader(b, dir, n, 3)
			pos := l.opts.Positions
			before := liveHeap()
			l.savePositions()
			kept := liveHeap() - before
			saveBytes := allocated(l.savePositions)
			writeBytes := allocated(func() { pos.mu.Lock(); pos.dirty = true; pos.mu.Unlock(); pos.write() })
			st, err := os.Stat(filepath.Join(dir, "positions.json"))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				l.savePositions()
				pos.write()
			}
			b.ReportMetric(float64(kept)/float64(n), "kept_bytes/service")
			b.ReportMetric(float64(saveBytes), "save_bytes")
			b.ReportMetric(float64(writeBytes), "write_bytes")
			b.ReportMetric(float64(st.Size()), "file_bytes")
		})
	}
}

// allocated returns the bytes fn allocates on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLogPositionsReadKeepsFewBytesPerService: what reading a state file
// keeps live until the readers resume, a service's positions as the file
// holds them (docs/configuration.md gives the figure).
func TestLogPositionsReadKeepsFewBytesPerService(t *testing.T) {
	const services = 2000
	dir := t.TempDir()
	func() {
		l := savingReader(t, dir, services, 3)
		l.savePositions()
		l.opts.Positions.write()
	}()
	before := liveHeap()
	pos, err := OpenLogPositions(filepath.Join(dir, "positions.json"), slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	perService := (float64(liveHeap()) - float64(before)) / services
	t.Logf("the positions read keep %.0f bytes a service", perService)
	if perService > 300 {
		t.Errorf("the positions read keep %.0f bytes a service, want at most 300", perService)
	}
	if perService < 100 {
		t.Errorf("the positions read keep %.0f bytes a service: fewer than 100 is no reading of them", perService)
	}
	runtime.KeepAlive(pos)
}
