package cloudsim

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// TestClockSkew: a simulator whose clock is ten minutes behind sends that
// time in the Date header of its answers and stamps its log entries with
// it; without a skew the Date header is the server's own.
func TestClockSkew(t *testing.T) {
	clock := fakeclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	sim := New(Options{Credentials: []Credential{rwCred}, Clock: clock.Now, ClockSkew: -10 * time.Minute, Revision: Revision2026})
	sim.LoadDemo(testProject)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	e := &env{t: t, sim: sim, srv: srv, clock: clock}
	_, _, h := e.do("GET", "/v1/projects/"+testProject+"/services", nil)
	want := clock.Now().Add(-10 * time.Minute)
	if got, err := http.ParseTime(h.Get("Date")); err != nil || !got.Equal(want) {
		t.Errorf("Date %q, want %s", h.Get("Date"), want)
	}
	id := sim.projects[testProject].serviceOrder[0]
	if err := sim.AddLogEntries(testProject, id, []LogEntry{{Severity: "FATAL", Message: "now"}}); err != nil {
		t.Fatal(err)
	}
	if n := sim.logCount(testProject, id, want.Add(-time.Second), want.Add(time.Second)); n < 1 {
		t.Errorf("%d entries stamped around the skewed now %s, want the one added", n, want)
	}

	plain := newEnvRev(t, Timings{}, Revision2026)
	_, _, h = plain.do("GET", "/v1/projects/"+testProject+"/services", nil)
	if got, err := http.ParseTime(h.Get("Date")); err != nil || time.Since(got) > time.Minute || time.Since(got) < -time.Minute {
		t.Errorf("Date %q without a skew, want the server's own time", h.Get("Date"))
	}
}
