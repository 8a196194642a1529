package dataplane

import (
	"testing"
	"time"
)

// TestLogsSeriesStartAtZero: every (service, severity) series is published
// at 0 before anything is added to it, so that increase() sees its first
// entries: the usual seven as soon as a service is first seen, and any
// other severity (OTHER, DEBUG1…) the first time an entry of it is
// counted, its count added at the next tick.
func TestLogsSeriesStartAtZero(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	id := "svc00"
	if l := h.tick(); count(l, id, "FATAL") != 0 || count(l, id, "LOG") != 0 {
		t.Fatalf("after a service is first seen: %v, want the usual severities at 0", l.Counts)
	}
	h.fl.add(id, h.clock.Now().Add(-time.Second), "FATAL", "f", 3)
	h.fl.add(id, h.clock.Now().Add(-time.Second), "DEBUG1", "d", 2)
	h.fl.add(id, h.clock.Now().Add(-time.Second), "weird", "w", 1)
	l := h.tick()
	if count(l, id, "FATAL") != 3 || count(l, id, "DEBUG1") != 0 || count(l, id, "OTHER") != 0 {
		t.Errorf("after the first entries: %v, want FATAL 3, DEBUG1 and OTHER at 0", l.Counts)
	}
	l = h.tick()
	if count(l, id, "FATAL") != 3 || count(l, id, "DEBUG1") != 2 || count(l, id, "OTHER") != 1 {
		t.Errorf("a tick later: %v, want FATAL 3, DEBUG1 2, OTHER 1", l.Counts)
	}
	seen := map[[2]string]bool{}
	for i, snap := range h.host.published {
		if logsOf(snap) == nil {
			continue
		}
		for k, n := range countsOf(logsOf(snap)) {
			if !seen[k] {
				seen[k] = true
				if n != 0 {
					t.Errorf("publish %d: series %v first appears at %v, want 0", i, k, n)
				}
			}
		}
	}
	if len(seen) != 9 {
		t.Errorf("%d series published, want the usual 7, DEBUG1 and OTHER", len(seen))
	}
}
