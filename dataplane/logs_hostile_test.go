package dataplane

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLogsCursorIgnored: an API that ignores the cursor (or repeats it)
// sends the first page again and again; its entries are counted once, the
// read stops there, and counting goes on from the newest entry.
func TestLogsCursorIgnored(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	h.fl.ignoreCursor = true
	id := "svc00"
	h.tick()
	calls := h.fl.calls // the first pass's look-back
	for i := range 7 {
		h.fl.add(id, h.clock.Now().Add(-time.Duration(10-i)*time.Second), "ERROR", "e"+strconv.Itoa(i), 1)
	}
	l := h.tick()
	if got := count(l, id, "ERROR"); got != 3 {
		t.Fatalf("%v ERROR entries counted from an API that repeats its first page of 3, want 3", got)
	}
	if got := h.fl.calls - calls; got != 2 {
		t.Errorf("%d calls, want 2: the repeated page ends the read", got)
	}
	if l.PagesTruncated != 1 {
		t.Errorf("truncated = %v, want 1: the older entries were not read", l.PagesTruncated)
	}
	h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "new", 2)
	if got := count(h.tick(), id, "ERROR"); got != 5 {
		t.Errorf("%v ERROR entries after 2 new ones, want 5", got)
	}
	if !strings.Contains(h.logs.String(), "cursor") {
		t.Errorf("no WARN line about the repeated cursor:\n%s", h.logs)
	}
}

// TestLogsFutureTimestamp: an entry stamped far in the future (sent by an
// API that ignores until) is not counted before its time and does not
// stop counting: the boundary never passes the read's until.
func TestLogsFutureTimestamp(t *testing.T) {
	for _, ignoreUntil := range []bool{false, true} {
		t.Run("ignore until "+strconv.FormatBool(ignoreUntil), func(t *testing.T) {
			h := newLogsHarness(t, 1, 5)
			h.fl.ignoreUntil = ignoreUntil
			id := "svc00"
			h.tick()
			h.fl.add(id, h.clock.Now().AddDate(10, 0, 0), "PANIC", "clock", 1)
			h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "e", 1)
			l := h.tick()
			if count(l, id, "ERROR") != 1 || count(l, id, "PANIC") != 0 {
				t.Fatalf("first read: %v", l.Counts)
			}
			for i := range 3 {
				h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "e", 1)
				l = h.tick()
				if got := count(l, id, "ERROR"); got != float64(2+i) || count(l, id, "PANIC") != 0 {
					t.Fatalf("read %d after a future entry: %v", i, l.Counts)
				}
			}
		})
	}
}

// TestLogsEmptyPageWithCursor: an empty page that still has a cursor ends
// the read, not truncated.
func TestLogsEmptyPageWithCursor(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	h.fl.emptyWithCursor = true
	id := "svc00"
	h.tick()
	calls := h.fl.calls // the first pass's look-back
	h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "e", 4)
	l := h.tick()
	if got := h.fl.calls - calls; count(l, id, "ERROR") != 4 || l.PagesTruncated != 0 || got != 3 {
		t.Errorf("counts %v, truncated %v after %d calls; want 4, 0 after 3", l.Counts, l.PagesTruncated, got)
	}
}

// TestLogsEntryOverValueBound: an entry the client cannot decode (over
// --api.max-value-size) would fail every read from the same boundary for
// good; the read's interval is skipped instead, counted as a truncated
// read, with one WARN naming the flag, and counting goes on.
func TestLogsEntryOverValueBound(t *testing.T) {
	h := newLogsHarness(t, 2, 5)
	h.fl.maxMessage = 100
	h.tick()
	h.fl.add("svc00", h.clock.Now().Add(-2*time.Second), "ERROR", strings.Repeat("x", 200), 1)
	h.fl.add("svc00", h.clock.Now().Add(-time.Second), "ERROR", "small", 1)
	h.fl.add("svc01", h.clock.Now().Add(-time.Second), "ERROR", "small", 1)
	l := h.tick()
	if count(l, "svc01", "ERROR") != 1 || l.PagesTruncated != 1 || logsHealth(h.host).Success {
		t.Fatalf("counts %v, truncated %v, health %+v", l.Counts, l.PagesTruncated, logsHealth(h.host))
	}
	for i := range 3 {
		h.fl.add("svc00", h.clock.Now().Add(-time.Second), "ERROR", "small", 1)
		l = h.tick()
		if got := count(l, "svc00", "ERROR"); got != float64(i+1) {
			t.Fatalf("read %d after the oversized entry: %v ERROR for svc00, want %d", i, got, i+1)
		}
	}
	if !logsHealth(h.host).Success || l.PagesTruncated != 1 {
		t.Errorf("after the skip: health %+v, truncated %v", logsHealth(h.host), l.PagesTruncated)
	}
	if n := strings.Count(h.logs.String(), "--api.max-value-size"); n != 1 {
		t.Errorf("%d WARN lines naming --api.max-value-size, want 1:\n%s", n, h.logs)
	}
}

// TestLogsWithoutTimestamps: entries without a readable timestamp cannot
// be placed against the boundary and are not counted; one WARN says how
// many, once, so that an API whose entries never carry one is not a
// silent zero. Severities are upper-cased; others are OTHER.
func TestLogsWithoutTimestamps(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	id := "svc00"
	h.tick()
	h.fl.add(id, time.Time{}, "ERROR", "no time", 2)
	h.fl.add(id, h.clock.Now().Add(-time.Second), "error", "lower", 1)
	h.fl.add(id, h.clock.Now().Add(-time.Second), " Fatal ", "spaced", 1)
	h.fl.add(id, h.clock.Now().Add(-time.Second), "warn", "not postgres", 1)
	h.fl.add(id, h.clock.Now().Add(-time.Second), "", "none", 1)
	h.tick()
	l := h.tick() // OTHER is new: published at 0 first, its entries added next
	if count(l, id, "ERROR") != 1 || count(l, id, "FATAL") != 1 || count(l, id, "OTHER") != 2 || count(l, id, "warn") != -1 {
		t.Errorf("counts %v", l.Counts)
	}
	out := h.logs.String()
	if n := strings.Count(out, "without a readable timestamp"); n != 1 || !strings.Contains(out, "entries=2") {
		t.Errorf("%d WARN lines about entries without a timestamp, want 1 with entries=2:\n%s", n, out)
	}
	if strings.Contains(out, "no time") {
		t.Errorf("a message reached the exporter's log:\n%s", out)
	}
}

// TestLogsPageCapOneLine: many services over the page cap in one read
// (an incident across the fleet) make one WARN line that counts them, not
// one per service; a looping API is not reported as a page cap.
func TestLogsPageCapOneLine(t *testing.T) {
	h := newLogsHarness(t, 4, 2)
	h.tick()
	for _, id := range []string{"svc00", "svc01", "svc02", "svc03"} {
		h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "e", 10)
	}
	l := h.tick()
	if l.PagesTruncated != 4 {
		t.Errorf("truncated %v, want 4", l.PagesTruncated)
	}
	if n := strings.Count(h.logs.String(), "page cap"); n != 1 || !strings.Contains(h.logs.String(), "services=4") {
		t.Errorf("%d page-cap WARN lines, want 1 with services=4:\n%s", n, h.logs)
	}

	h2 := newLogsHarness(t, 1, 5)
	h2.fl.ignoreCursor = true
	h2.tick()
	h2.fl.add("svc00", h2.clock.Now().Add(-time.Second), "ERROR", "e", 10)
	h2.tick()
	if strings.Contains(h2.logs.String(), "page cap") {
		t.Errorf("a looping API reported as a page cap:\n%s", h2.logs)
	}
}
