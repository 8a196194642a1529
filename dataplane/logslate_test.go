package dataplane

import (
	"testing"
	"time"
)

// TestLogsLateEntries: an entry that arrives after a read has passed its
// timestamp, up to one interval before the newest counted, is counted at
// the next read and in Late, once however often the reads reach back
// over it; one older than that is neither; reaching back costs no call
// beyond the page that crosses the boundary.
func TestLogsLateEntries(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	id := "svc00"
	h.tick()
	t0 := h.clock.Now()
	h.fl.add(id, t0.Add(-40*time.Second), "ERROR", "on time", 2)
	h.fl.add(id, t0.Add(-10*time.Second), "LOG", "on time", 1)
	h.tick()
	h.fl.add(id, t0.Add(-20*time.Second), "FATAL", "late", 1)                   // 10s before the boundary
	h.fl.add(id, t0.Add(-10*time.Second-2*time.Minute), "PANIC", "too late", 1) // beyond the window
	h.fl.add(id, t0.Add(30*time.Second), "WARNING", "new", 1)
	for range 4 {
		h.tick()
	}
	l := logsOf(h.host.Snapshot())
	if count(l, id, "FATAL") != 1 || count(l, id, "ERROR") != 2 || count(l, id, "WARNING") != 1 || count(l, id, "PANIC") != 0 || l.Late != 1 {
		t.Fatalf("counted %v, late %v; want the late FATAL once, not the PANIC beyond the window", l.Counts, l.Late)
	}

	// The first page of 3 (the new entry, the boundary's, an older one)
	// reaches below the boundary: the read stops there.
	calls := h.fl.calls
	h.fl.add(id, h.clock.Now().Add(-time.Second), "LOG", "new", 1)
	h.tick()
	if got := h.fl.calls - calls; got != 1 {
		t.Errorf("a read of 1 new entry made %d calls, want 1", got)
	}
	if l := logsOf(h.host.Snapshot()); count(l, id, "LOG") != 2 || l.Late != 1 {
		t.Errorf("after a new entry: %v, late %v", l.Counts, l.Late)
	}
}

// TestLogsLateAfterTruncation: the entries a read over the page cap left
// unread are not counted later as late ones.
func TestLogsLateAfterTruncation(t *testing.T) {
	h := newLogsHarness(t, 1, 1)
	id := "svc00"
	h.tick()
	for i := range 6 {
		h.fl.add(id, h.clock.Now().Add(-time.Duration(6-i)*time.Second), "ERROR", "e", 1)
	}
	l := h.tick()
	if count(l, id, "ERROR") != 3 || l.PagesTruncated != 1 {
		t.Fatalf("capped read: %v, truncated %v; want the 3 newest", l.Counts, l.PagesTruncated)
	}
	h.tick()
	if l := h.tick(); count(l, id, "ERROR") != 3 || l.Late != 0 {
		t.Errorf("after the capped read: %v, late %v; want the uncounted entries left so", l.Counts, l.Late)
	}
}
