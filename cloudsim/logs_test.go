package cloudsim

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func (e *env) logs(id string, q url.Values) apiclient.LogPage {
	e.t.Helper()
	return decode[apiclient.LogPage](e.t, e.must(http.StatusOK, "GET", servicesPath+"/"+id+"/logs?"+q.Encode(), nil))
}

// readAll pages through the logs with the cursor and returns every entry.
func (e *env) readAll(id string, query url.Values) (entries []apiclient.LogEntry, pages int) {
	e.t.Helper()
	q := maps.Clone(query)
	for {
		p := e.logs(id, q)
		pages++
		if len(p.Entries) > logsPageSize {
			e.t.Fatalf("page of %d entries", len(p.Entries))
		}
		entries = append(entries, p.Entries...)
		if p.LastCursor == "" {
			return entries, pages
		}
		if len(p.Entries) != logsPageSize {
			e.t.Fatalf("page of %d entries has a next cursor", len(p.Entries))
		}
		q.Set("cursor", p.LastCursor)
	}
}

func TestLogsPagingIsExact(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	id := create2026(e, "main", "1000", "4", nil).ServiceID
	if err := e.sim.SetLogRate(testProject, id, 120); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * time.Minute)
	// 1,200 entries added at one timestamp: the page boundaries fall inside
	// a run of equal timestamps.
	at := e.clock.Now().Add(-10 * time.Minute)
	added := make([]LogEntry, 1200)
	for i := range added {
		added[i] = LogEntry{Timestamp: at, Severity: "ERROR", Message: "same"}
	}
	if err := e.sim.AddLogEntries(testProject, id, added); err != nil {
		t.Fatal(err)
	}
	since := e.clock.Now().Add(-20 * time.Minute)
	q := url.Values{"since": {since.Format(time.RFC3339)}}
	all, pages := e.readAll(id, q)
	if pages < 4 {
		t.Errorf("%d pages, want at least 4", pages)
	}
	// The oracle: the window's entries, counted without paging.
	want := e.sim.logCount(testProject, id, since, e.clock.Now())
	if len(all) != want {
		t.Errorf("paged read found %d entries, the window holds %d", len(all), want)
	}
	errors, bySec := 0, map[time.Time]int{}
	for i, en := range all {
		if i > 0 && en.Timestamp.After(all[i-1].Timestamp.Time) {
			t.Fatalf("entry %d is newer than entry %d", i, i-1)
		}
		if en.Timestamp.Before(since) {
			t.Fatalf("entry %d at %s is before since", i, en.Timestamp)
		}
		if en.Timestamp.Equal(at) && en.Message == "same" {
			errors++
		}
		bySec[en.Timestamp.Time]++
	}
	if errors != 1200 {
		t.Errorf("%d of the 1,200 added entries were read", errors)
	}
	equal := 0
	for _, n := range bySec {
		if n == 2 {
			equal++
		}
	}
	if equal == 0 {
		t.Error("no generated pair of entries with equal timestamps")
	}

	// Filters.
	q = url.Values{"since": {since.Format(time.RFC3339)}, "severities": {"FATAL", "ERROR"}}
	filtered, _ := e.readAll(id, q)
	for _, en := range filtered {
		if en.Severity != "FATAL" && en.Severity != "ERROR" {
			t.Fatalf("severities filter let %s through", en.Severity)
		}
	}
	if len(filtered) < 1200 {
		t.Errorf("%d entries with the filter", len(filtered))
	}
	until := at.Add(-time.Second)
	for _, en := range e.logs(id, url.Values{"until": {until.Format(time.RFC3339)}}).Entries {
		if en.Timestamp.After(until) {
			t.Fatalf("until let %s through", en.Timestamp)
		}
	}
	// since is inclusive: an entry at exactly since comes again.
	p := e.logs(id, url.Values{"since": {at.Format(time.RFC3339Nano)}, "until": {at.Format(time.RFC3339Nano)}})
	if len(p.Entries) == 0 || !p.Entries[len(p.Entries)-1].Timestamp.Equal(at) {
		t.Errorf("since = until = an entry's timestamp gave %d entries", len(p.Entries))
	}
}

func TestLogsGenerated(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	id := create2026(e, "main", "1000", "4", map[string]any{"replica_count": 1}).ServiceID
	e.clock.Advance(2 * time.Hour)
	q := url.Values{"since": {e.clock.Now().Add(-time.Hour).Format(time.RFC3339)}}
	all, _ := e.readAll(id, q)
	seen := map[string]int{}
	for _, en := range all {
		seen[en.Severity]++
		if en.Message == "" || en.Timestamp.After(e.clock.Now()) {
			t.Fatalf("entry %+v", en)
		}
	}
	if len(all) < 300 || seen["LOG"] == 0 || seen["ERROR"] == 0 || seen["WARNING"] == 0 {
		t.Errorf("an hour of logs: %d entries by severity %v", len(all), seen)
	}
	again, _ := e.readAll(id, q)
	if len(again) != len(all) || again[0] != all[0] {
		t.Error("two reads of the same window differ")
	}
	replica, _ := e.readAll(id, url.Values{"since": q["since"], "node": {"1"}})
	if len(replica) == 0 || (len(replica) == len(all) && replica[0] == all[0]) {
		t.Errorf("the replica's logs are empty or the primary's")
	}
	for _, bad := range []url.Values{{"node": {"-1"}}, {"node": {"2"}}, {"since": {"x"}}, {"cursor": {"zz"}}} {
		e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "GET", servicesPath+"/"+id+"/logs?"+bad.Encode(), nil)
	}
	if err := e.sim.SetLogRate(testProject, id, 121); err == nil {
		t.Error("a rate of 121 a minute was accepted")
	}
}

func TestLogsControl(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	id := create2026(e, "main", "1000", "4", nil).ServiceID
	ctl := "/_sim/projects/" + testProject + "/services/" + id + "/logs"
	e.clock.Advance(time.Minute)
	e.must(http.StatusNoContent, "POST", ctl, map[string]any{"rate_per_minute": 0, "entries": []map[string]any{{"severity": "FATAL", "message": "boom"}}})
	p := e.logs(id, nil)
	if len(p.Entries) != 1 || p.Entries[0].Severity != "FATAL" || !p.Entries[0].Timestamp.Equal(e.clock.Now()) {
		t.Errorf("logs after the control: %+v", p.Entries)
	}
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", ctl, map[string]any{"rate": 1})
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", "/_sim/projects/"+testProject+"/services/nope/logs", map[string]any{})
}

// TestLogsGeneratedFatalIsRare: a healthy database logs FATAL or PANIC a
// few times a week, not every few minutes: ten services at the highest
// default rate for a week log a few in all.
func TestLogsGeneratedFatalIsRare(t *testing.T) {
	svcs := make([]*service, 10)
	for i := range svcs {
		svcs[i] = &service{id: fmt.Sprintf("svc-%02d", i)}
	}
	seen := map[string]int{}
	var out []logEntry
	for sec := range int64(7 * 24 * 3600) {
		for _, svc := range svcs {
			out = svc.generated(out[:0], 0, sec, 30)
			for _, e := range out {
				seen[e.severity]++
			}
		}
	}
	rare := seen[apiclient.SeverityFatal] + seen[apiclient.SeverityPanic]
	if rare == 0 || rare > 40 || seen[apiclient.SeverityError] < 10000 {
		t.Errorf("a week of 10 services at 30 entries a minute: %v", seen)
	}
}

// logCount counts without paging: the oracle of the paging tests.
func (s *Sim) logCount(projectID, serviceID string, since, until time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, err := s.controlService(projectID, serviceID)
	if err != nil {
		return -1
	}
	return len(svc.logWindow(logsQuery{since: since, until: until}, s.clock()))
}
