package dataplane

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// TestLogsFirstReadCountsSkipped: without a state file, the first pass
// reads, once per service and one page at most, the interval before the
// boundary it sets, and counts what it saw in EntriesSkipped, served at 0
// first; never in the severity counters (no backfill). A service first
// seen later is not looked back at.
func TestLogsFirstReadCountsSkipped(t *testing.T) {
	h := newLogsHarness(t, 2, 5)
	t0 := h.clock.Now()
	h.fl.add("svc00", t0.Add(-2*time.Minute), "ERROR", "before the interval", 4)
	h.fl.add("svc00", t0.Add(-time.Minute), "ERROR", "interval start", 1)
	h.fl.add("svc00", t0.Add(-30*time.Second), "FATAL", "lost", 1)
	h.fl.add("svc01", t0.Add(-time.Second), "FATAL", "lost", 1)
	h.fl.add("svc00", t0, "LOG", "at the boundary", 1)
	l := h.tick()
	if l.EntriesSkipped != 0 || count(l, "svc00", "FATAL") != 0 || h.fl.calls != 2 {
		t.Fatalf("the first pass: skipped %v, counts %v, %d calls; want skipped served at 0, one call per service", l.EntriesSkipped, l.Counts, h.fl.calls)
	}
	h.host.setServices(func(s []fleet.Service) []fleet.Service { return append(s, newFakeHost(3).services[2]) })
	h.fl.add("svc02", h.clock.Now().Add(-time.Second), "FATAL", "before svc02 is seen", 1)
	for range 3 {
		l = h.tick()
	}
	if l.EntriesSkipped != 3 {
		t.Errorf("EntriesSkipped = %v, want the 3 entries of the interval before the boundary", l.EntriesSkipped)
	}
	for _, id := range []string{"svc00", "svc01", "svc02"} {
		if count(l, id, "FATAL") != 0 || count(l, id, "ERROR") != 0 {
			t.Errorf("%s: skipped entries reached the severity counters: %v", id, l.Counts)
		}
	}
	if count(l, "svc00", "LOG") != 1 {
		t.Errorf("the entry at the boundary was not counted: %v", l.Counts)
	}
}

// TestLogsFirstReadOnePage: the look-back reads one page at most; a full
// page counts its entries, a lower bound.
func TestLogsFirstReadOnePage(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	h.fl.add("svc00", h.clock.Now().Add(-10*time.Second), "ERROR", "e", 7)
	h.tick()
	if h.fl.calls != 1 {
		t.Errorf("the look-back made %d calls, want 1", h.fl.calls)
	}
	if l := h.tick(); l.EntriesSkipped != float64(h.fl.pageSize) {
		t.Errorf("EntriesSkipped = %v, want one full page (%d)", l.EntriesSkipped, h.fl.pageSize)
	}
}

// TestLogsFirstReadWithStateFile: with a state file, a service it holds
// resumes and is not counted as skipped; one it does not hold is.
func TestLogsFirstReadWithStateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	h := newLogsHarness(t, 1, 5)
	h.restart(t, path, 0, testAPI)
	h.tick()
	h.tick()
	h.host = newFakeHost(2)
	h.fl.add("svc00", h.clock.Now().Add(30*time.Second), "ERROR", "while down", 2)
	h.fl.add("svc01", h.clock.Now().Add(30*time.Second), "ERROR", "not held", 1)
	h.restart(t, path, time.Minute, testAPI)
	h.tick()
	l := h.tick()
	if count(l, "svc00", "ERROR") != 2 || count(l, "svc01", "ERROR") != 0 || l.EntriesSkipped != 1 {
		t.Errorf("after the restart: %v, skipped %v; want svc00's 2 resumed, svc01's 1 skipped", l.Counts, l.EntriesSkipped)
	}
}

// TestLogsPageCapSkipped: a read that hits the page cap (2 pages of 3
// here) reads the next page to count, not to count in the severities,
// what it leaves: a lower bound (3 of the 4 left; a full page says at
// least that many), at one call more; a read within the cap reads none.
func TestLogsPageCapSkipped(t *testing.T) {
	h := newLogsHarness(t, 1, 2)
	id := "svc00"
	h.tick()
	base := h.clock.Now()
	for i := range 10 {
		h.fl.add(id, base.Add(-time.Duration(10-i)*time.Second), "ERROR", "e", 1)
	}
	calls := h.fl.calls
	l := h.tick()
	if count(l, id, "ERROR") != 6 || l.PagesTruncated != 1 || l.PageCapSkipped != 3 {
		t.Errorf("capped read: %v ERROR counted, %v truncated, %v skipped; want 6, 1 and 3", count(l, id, "ERROR"), l.PagesTruncated, l.PageCapSkipped)
	}
	if n := h.fl.calls - calls; n != 3 {
		t.Errorf("%d calls for a capped read of 2 pages, want 3: the cap's and the next page", n)
	}
	h.fl.add(id, h.clock.Now(), "ERROR", "e", 2)
	if l = h.tick(); l.PageCapSkipped != 3 || l.PagesTruncated != 1 || count(l, id, "ERROR") != 8 {
		t.Errorf("a read within the cap: %v skipped, %v truncated, %v ERROR; want 3, 1 and 8", l.PageCapSkipped, l.PagesTruncated, count(l, id, "ERROR"))
	}
}
