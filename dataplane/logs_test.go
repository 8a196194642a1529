package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// fakeLogs is a service's logs as the API serves them: newest first, pages
// of pageSize, since and until inclusive (or since exclusive, to show that
// counting is exact either way), a cursor that is an offset.
type fakeLogs struct {
	mu             sync.Mutex
	entries        map[string][]apiclient.LogEntry // by service, in the order written
	pageSize       int
	sinceExclusive bool
	ignoreCursor   bool // a hostile API: every page is the first, with a cursor
	ignoreUntil    bool // a hostile API: entries newer than until are sent too
	ignoreSince    bool // and older than since
	// maxMessage, when set, fails a read whose entries hold a longer
	// message, as the client fails an answer over its value bound.
	maxMessage int
	// emptyWithCursor: the last page has a cursor too, to an empty page.
	emptyWithCursor bool
	fail            error
	calls           int
	// onCall, when set, runs before each answer (outside the lock).
	onCall func(id string)
}

func (f *fakeLogs) add(id string, ts time.Time, severity, msg string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.entries[id] = append(f.entries[id], apiclient.LogEntry{Timestamp: apiclient.Time{Time: ts}, Severity: severity, Message: msg})
	}
}

func (f *fakeLogs) GetServiceLogs(_ context.Context, id string, q apiclient.LogsQuery) (*apiclient.LogPage, error) {
	if f.onCall != nil {
		f.onCall(id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail != nil {
		return nil, f.fail
	}
	var match []apiclient.LogEntry
	all := f.entries[id]
	for i := len(all) - 1; i >= 0; i-- { // newest written last
		e := all[i]
		if !f.ignoreSince && !e.Timestamp.IsZero() && e.Timestamp.Before(q.Since) || f.sinceExclusive && e.Timestamp.Equal(q.Since) || !f.ignoreUntil && !q.Until.IsZero() && e.Timestamp.After(q.Until) {
			continue
		}
		if f.maxMessage > 0 && len(e.Message) > f.maxMessage {
			return nil, fmt.Errorf("apiclient: getServiceLogs: %w", apiclient.ErrValueTooLarge)
		}
		match = append(match, e)
	}
	// Newest first by timestamp; equal ones in a fixed order.
	for i := 1; i < len(match); i++ {
		for j := i; j > 0 && match[j].Timestamp.After(match[j-1].Timestamp.Time); j-- {
			match[j], match[j-1] = match[j-1], match[j]
		}
	}
	start, _ := strconv.Atoi(q.Cursor)
	if f.ignoreCursor {
		start = 0
	}
	end := min(len(match), start+f.pageSize)
	page := &apiclient.LogPage{Entries: match[start:end]}
	if end < len(match) || f.emptyWithCursor {
		page.LastCursor = strconv.Itoa(end)
	}
	return page, nil
}

type logsHarness struct {
	clock *fakeclock.Clock
	fl    *fakeLogs
	host  *fakeHost
	l     *logsReader
	logs  *bytes.Buffer
}

func newLogsHarness(t *testing.T, services, maxPages int) *logsHarness {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	host := newFakeHost(services)
	var logs bytes.Buffer
	cfg := logsSettings{Enabled: true, Interval: time.Minute, MaxPages: maxPages}
	opts := Options{Collect: withReader(config.Collect{Interval: time.Minute, Concurrency: 2}, logsKey, cfg),
		Now: clock.Now, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	fl := &fakeLogs{entries: map[string][]apiclient.LogEntry{}, pageSize: 3}
	l := newLogsReader(newRunner(host, opts, PartLogs, cfg.Interval), fl)
	l.unpaced = true
	return &logsHarness{clock: clock, fl: fl, host: host, l: l, logs: &logs}
}

func (h *logsHarness) tick() *Logs {
	h.l.tick(context.Background())
	h.clock.Advance(time.Minute)
	return logsOf(h.host.Snapshot())
}

func count(l *Logs, id, severity string) float64 {
	if n, ok := countsOf(l)[[2]string{id, severity}]; ok {
		return n
	}
	return -1
}

// countsOf returns l's counts by service id and severity.
func countsOf(l *Logs) map[[2]string]float64 {
	out := map[[2]string]float64{}
	for _, c := range l.Counts {
		for i, sev := range LogSeverities {
			if n, ok := c.Count(i); ok {
				out[[2]string{c.ServiceID(), sev}] = n
			}
		}
	}
	return out
}

// TestLogsCountingIsExact: entries are counted once across page and poll
// boundaries, with equal timestamps at the boundary and late arrivals at
// it, whether the API's since is inclusive or not; nothing before the
// first read is counted (nor skipped: older than the look-back).
func TestLogsCountingIsExact(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		t.Run("since exclusive "+strconv.FormatBool(exclusive), func(t *testing.T) {
			h := newLogsHarness(t, 1, 10)
			h.fl.sinceExclusive = exclusive
			id := "svc00"
			h.fl.add(id, h.clock.Now().Add(-time.Hour), "ERROR", "old", 5) // before the first read: no backfill
			if l := h.tick(); len(countsOf(l)) != 7 || count(l, id, "ERROR") != 0 || h.fl.calls != 1 {
				t.Fatalf("the first interval exported %v after %d calls, want the usual severities at 0 and the look-back's call", l.Counts, h.fl.calls)
			}
			t0 := h.clock.Now()
			h.fl.add(id, t0.Add(-30*time.Second), "ERROR", "dup key", 4) // 4 equal entries, across pages of 3
			h.fl.add(id, t0.Add(-10*time.Second), "LOG", "checkpoint", 1)
			h.fl.add(id, t0.Add(-10*time.Second), "weird", "x", 2) // the boundary: 3 entries at one timestamp
			l := h.tick()
			// OTHER is new: published at 0 first, its entries added next.
			if count(l, id, "ERROR") != 4 || count(l, id, "LOG") != 1 || count(l, id, "OTHER") != 0 || count(l, id, "FATAL") != 0 {
				t.Fatalf("after the first poll: %v", l.Counts)
			}
			// Late arrivals at exactly the boundary, and newer entries.
			h.fl.add(id, t0.Add(-10*time.Second), "LOG", "checkpoint", 1)
			h.fl.add(id, t0.Add(-10*time.Second), "FATAL", "late", 1)
			h.fl.add(id, t0.Add(20*time.Second), "FATAL", "new", 3)
			l = h.tick()
			// The read reaches back before the boundary for late entries,
			// so an API with an exclusive since sends them too.
			wantFatal, wantLog := 4.0, 2.0
			if count(l, id, "FATAL") != wantFatal || count(l, id, "LOG") != wantLog || count(l, id, "ERROR") != 4 || count(l, id, "OTHER") != 2 || l.EntriesSkipped != 0 {
				t.Fatalf("after the second poll: %v", l.Counts)
			}
			// Nothing new: nothing changes, however often the boundary
			// comes again.
			for range 3 {
				if again := h.tick(); count(again, id, "FATAL") != wantFatal || count(again, id, "LOG") != wantLog {
					t.Fatalf("a poll with nothing new changed the counts: %v", again.Counts)
				}
			}
		})
	}
}

// TestLogsPageCap: a service that writes more than max-pages pages in an
// interval has its newest pages counted, the truncation counted and one
// WARN line; the next interval goes on from the newest entry.
func TestLogsPageCap(t *testing.T) {
	h := newLogsHarness(t, 1, 2)
	id := "svc00"
	h.tick()
	base := h.clock.Now()
	for i := range 10 {
		h.fl.add(id, base.Add(-time.Duration(10-i)*time.Second), "ERROR", "e", 1)
	}
	l := h.tick()
	if count(l, id, "ERROR") != 6 || l.PagesTruncated != 1 {
		t.Fatalf("capped read counted %v ERROR, truncated %v; want the 6 newest and 1", count(l, id, "ERROR"), l.PagesTruncated)
	}
	h.fl.add(id, h.clock.Now(), "ERROR", "e", 2)
	l = h.tick()
	if count(l, id, "ERROR") != 8 || l.PagesTruncated != 1 {
		t.Errorf("after the cap: %v ERROR, truncated %v", count(l, id, "ERROR"), l.PagesTruncated)
	}
	for i := range 10 {
		h.fl.add(id, h.clock.Now().Add(-time.Duration(i)*time.Millisecond), "ERROR", "e", 1)
	}
	h.tick()
	if n := strings.Count(h.logs.String(), "page cap"); n != 1 {
		t.Errorf("%d WARN lines about the page cap, want 1:\n%s", n, h.logs)
	}
	if strings.Contains(h.logs.String(), `"e"`) || strings.Contains(h.logs.String(), "msg=e") {
		t.Errorf("a log message reached the exporter's log:\n%s", h.logs)
	}
}

// TestLogsFailuresAndNotFound: a failed read keeps the counts, flagged; a
// 404 API turns logs off with one line and is asked again hourly.
func TestLogsFailuresAndNotFound(t *testing.T) {
	h := newLogsHarness(t, 2, 5)
	h.tick()
	h.fl.add("svc01", h.clock.Now().Add(-time.Second), "ERROR", "x", 1)
	h.tick()
	h.fl.fail = errBoom
	l := h.tick()
	if count(l, "svc01", "ERROR") != 1 {
		t.Errorf("a failed read lost the counts: %v", l.Counts)
	}
	health := logsHealth(h.host)
	if health.Success || health.LastSuccess.IsZero() {
		t.Errorf("health after a failure = %+v", health)
	}

	h2 := newLogsHarness(t, 2, 5)
	h2.fl.fail = errNotFound
	for range 30 {
		h2.tick()
	}
	// 2 services: one interval's reads (the first interval makes none),
	// then nothing for the hour.
	if h2.fl.calls != 2 {
		t.Errorf("%d calls in 30 minutes against an API without logs, want 2", h2.fl.calls)
	}
	for range 33 { // the hour, then a first read (no backfill), then the reads
		h2.tick()
	}
	if h2.fl.calls != 4 {
		t.Errorf("%d calls after an hour, want 4", h2.fl.calls)
	}
	if n := strings.Count(h2.logs.String(), "no service logs"); n != 1 {
		t.Errorf("%d log lines, want 1", n)
	}
}

// TestLogsBudgetWarn: when the call budget the state calls leave cannot
// read every selected service once per log interval, one WARN line says
// so with the numbers and the fix, and one INFO line when it fits again.
func TestLogsBudgetWarn(t *testing.T) {
	h := newLogsHarness(t, 1500, 5)
	h.l.opts.RateLimit = 5
	for range 3 {
		h.tick()
	}
	out := h.logs.String()
	if n := strings.Count(out, "level=WARN msg=\"The API call budget"); n != 1 {
		t.Fatalf("%d budget WARN lines, want 1:\n%s", n, out)
	}
	for _, want := range []string{"calls_needed=1500", "budget_per_interval=", "read_period=", "--api.rate-limit", "--collect.logs.interval", "--collect.logs.service-name-regex"} {
		if !strings.Contains(out, want) {
			t.Errorf("the WARN line lacks %q:\n%s", want, out)
		}
	}
	h.l.opts.RateLimit = 1000
	h.tick()
	h.tick()
	if n := strings.Count(h.logs.String(), "covers every selected service's log read"); n != 1 {
		t.Errorf("%d INFO lines when the budget fits again, want 1:\n%s", n, h.logs)
	}
}

func logsHealth(host *fakeHost) fleet.PartHealth {
	ph, _ := host.part(PartLogs)
	return ph
}

// TestLogsPublishedAsReadsReturn: a pass over many services is paced over
// minutes when the budget is short; the counts of the services already
// read are published as it goes, not only at its end.
func TestLogsPublishedAsReadsReturn(t *testing.T) {
	h := newLogsHarness(t, 3, 5)
	h.l.opts.Concurrency = 1
	h.tick()
	for _, id := range []string{"svc00", "svc01", "svc02"} {
		h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "e", 1)
	}
	var seen float64 = -1
	h.fl.onCall = func(id string) {
		h.clock.Advance(time.Minute) // the paced calls take long
		if id == "svc02" {
			if l := logsOf(h.host.Snapshot()); l != nil {
				seen = count(l, "svc00", "ERROR")
			}
		}
	}
	h.tick()
	if seen != 1 {
		t.Errorf("while the pass went on, svc00's ERROR count was %v, want 1", seen)
	}
}

// TestLogsPublishRace: a pass that publishes while new services get their
// first cursor (run with -race).
func TestLogsPublishRace(t *testing.T) {
	h := newLogsHarness(t, 40, 5)
	h.tick()
	h.l.cursors = map[string]*logCursor{"svc00": h.l.cursors["svc00"], "svc01": h.l.cursors["svc01"]}
	h.fl.onCall = func(string) { h.clock.Advance(time.Minute) }
	h.tick()
	if l := logsOf(h.host.Snapshot()); count(l, "svc00", "ERROR") != 0 || count(l, "svc39", "ERROR") != 0 {
		t.Errorf("counts %v", l.Counts)
	}
}

// TestLogsOutageRecovery: through an outage the counts keep their values
// (never reset, the part flagged); after it, the entries written during
// the outage are counted once, those before it not again.
func TestLogsOutageRecovery(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	id := "svc00"
	h.tick()
	h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "before", 2)
	h.tick()
	h.fl.fail = errBoom
	for range 5 {
		h.fl.add(id, h.clock.Now().Add(-time.Second), "ERROR", "during", 1)
		if l := h.tick(); count(l, id, "ERROR") != 2 || logsHealth(h.host).Success {
			t.Fatalf("during the outage: %v, health %+v", l.Counts, logsHealth(h.host))
		}
	}
	h.fl.fail = nil
	for range 2 {
		if l := h.tick(); count(l, id, "ERROR") != 7 || !logsHealth(h.host).Success {
			t.Fatalf("after the outage: %v, health %+v; want 7 ERROR", l.Counts, logsHealth(h.host))
		}
	}
}

// TestLogsWaitForState: log calls, like usage calls, wait while state
// calls run, so that a cycle never queues behind them for the rate
// limit's tokens.
func TestLogsWaitForState(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	h.host.enter()
	done := make(chan bool)
	go func() { done <- h.l.pace(context.Background()) }()
	select {
	case <-done:
		t.Fatal("a log call went while state calls ran")
	case <-time.After(100 * time.Millisecond):
	}
	h.host.leave()
	select {
	case ok := <-done:
		if !ok {
			t.Error("wait failed after the state calls ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a log call still waits after the state calls ended")
	}
}

// TestLogsFailureFlaggedAtOnce: in an outage a pass of reads, each waiting
// out its timeout and retries, can last hours; the part is flagged at the
// first failed read, not at the end of the pass, and the counts stay.
func TestLogsFailureFlaggedAtOnce(t *testing.T) {
	h := newLogsHarness(t, 3, 5)
	h.l.opts.Concurrency = 1
	h.tick()
	h.fl.add("svc00", h.clock.Now().Add(-time.Second), "ERROR", "e", 1)
	h.tick()
	h.fl.fail = errBoom
	var during fleet.PartHealth
	var counted float64
	h.fl.onCall = func(id string) {
		if id == "svc02" {
			during = logsHealth(h.host)
			counted = count(logsOf(h.host.Snapshot()), "svc00", "ERROR")
		}
	}
	h.tick()
	if during.Success || during.LastSuccess.IsZero() || counted != 1 {
		t.Errorf("while the failing pass went on: health %+v, svc00 ERROR %v; want flagged, counts kept", during, counted)
	}
}

// TestLogsDelay: with --collect.logs.delay, a read counts up to that long
// before it, so that entries the provider's pipeline delivers late (older
// than the newest counted by the time they arrive) are counted in time;
// without it they are counted at the next read, as late ones.
func TestLogsDelay(t *testing.T) {
	for _, delay := range []time.Duration{0, 30 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			h := newLogsHarness(t, 1, 5)
			h.l.cfg.Delay = delay
			id := "svc00"
			h.tick()
			h.fl.add(id, h.clock.Now().Add(-5*time.Second), "ERROR", "on time", 1)
			h.tick()
			// Written before the on-time one, delivered after the read.
			h.fl.add(id, h.clock.Now().Add(-time.Minute-7*time.Second), "ERROR", "late", 1)
			h.fl.add(id, h.clock.Now().Add(-time.Minute-6*time.Second), "ERROR", "late", 1)
			h.tick()
			l := h.tick()
			wantLate := 0.0
			if delay == 0 {
				wantLate = 2 // older than the newest counted when they arrived
			}
			if got := count(l, id, "ERROR"); got != 3 || l.Late != wantLate {
				t.Errorf("%v ERROR entries counted, %v late; want 3, %v", got, l.Late, wantLate)
			}
		})
	}
}
