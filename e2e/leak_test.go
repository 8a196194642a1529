package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestNoLeaks is node_exporter's TestFileDescriptorLeak, widened: the
// exporter's file descriptors and goroutines must stay within the range
// seen after a warm-up while it serves hundreds of scrapes (plain, gzip,
// half-read, service discovery, landing page) and admin requests, and its
// API churns, fails and drops connections. A leak of one per request would
// show hundreds; the slack only absorbs pooled connections and the
// simulator's churn being in flight. Progress is counted in poll cycles,
// not time.
func TestNoLeaks(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: cannot count file descriptors")
	}
	sim := testbin.StartSim(t, "--churn.interval=100ms", "--timing.provision=300ms", "--timing.configure=300ms",
		"--timing.delete=300ms", "--timing.replica-set=300ms", "--timing.peering=300ms")
	r := &leakRun{
		t:   t,
		exp: testbin.StartWithAdmin(t, sim, "--collect.interval=1s", "--collect.transition-interval=200ms", "--collect.max-staleness=1m"),
		// Without keep-alive every request opens and closes a connection,
		// so a connection the exporter fails to release shows.
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second},
	}
	r.exp.ExerciseAdmin(t, r.exp.Scrape(t))

	_, baseline := r.sample(0, 8, 3) // warm-up: pools, caches, the gzip writer
	c0 := r.cycles()
	r.sample(8, 40, 10) // the churn: 40 rounds and at least 10 poll cycles
	r.exp.Sim.ClearFaults(t)
	after, _ := r.sample(48, 8, 2)

	const fdSlack, goroutineSlack = 8, 20
	if after.fds > baseline.fds+fdSlack {
		t.Errorf("file descriptors grew: at least %d after the churn, at most %d after the warm-up (slack %d)", after.fds, baseline.fds, fdSlack)
	}
	if after.goroutines > baseline.goroutines+goroutineSlack {
		t.Errorf("goroutines grew: at least %d after the churn, at most %d after the warm-up (slack %d)", after.goroutines, baseline.goroutines, goroutineSlack)
	}
	t.Logf("file descriptors: warm-up max %d, after churn min %d; goroutines: warm-up max %d, after churn min %d (%.0f cycles)",
		baseline.fds, after.fds, baseline.goroutines, after.goroutines, r.cycles()-c0)
	if strings.Contains(r.exp.Output(), "panic") {
		t.Errorf("the exporter panicked:\n%s", r.exp.Output())
	}
}

// usage is one reading of the exporter's open file descriptors (from
// /proc/<pid>/fd) and goroutines (go_goroutines).
type usage struct{ fds, goroutines int }

// leakRun is an exporter with its admin surface in front of a churning
// simulator, and a client that never reuses connections.
type leakRun struct {
	t      *testing.T
	exp    *testbin.Exporter
	client *http.Client
}

// do sends a request with the admin token, reads the answer and returns
// its status.
func (r *leakRun) do(method, url string, header ...string) int {
	r.t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.exp.AdminToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// cycles counts the poll cycles the simulator has seen, failed ones
// included.
func (r *leakRun) cycles() float64 {
	return float64(r.exp.Sim.Requests(r.t)["listServices"])
}

// work is one round of what a busy exporter serves, and every third
// round a fault for the poller.
func (r *leakRun) work(round int) {
	for i := range 20 {
		encoding := map[bool]string{true: "gzip", false: "identity"}[i%2 == 0]
		if code := r.do(http.MethodGet, r.exp.URL+"/metrics", "Accept-Encoding", encoding); code != http.StatusOK {
			r.t.Fatalf("GET /metrics: %d", code)
		}
	}
	for _, path := range []string{"/", "/sd/services", "/sd/replica-sets", "/sd/poolers", "/-/ready", "/-/healthy"} {
		// Service discovery answers 503 while a fleet's replica sets are
		// unknown (before their first list, or after a fault): fine here.
		code := r.do(http.MethodGet, r.exp.URL+path)
		sdUnknown := strings.HasPrefix(path, "/sd/") && code == http.StatusServiceUnavailable
		if code != http.StatusOK && !sdUnknown {
			r.t.Fatalf("GET %s: %d", path, code)
		}
	}
	// A half-read scrape: the client goes away mid-body.
	if resp, err := r.client.Get(r.exp.URL + "/metrics"); err == nil {
		_, _ = io.CopyN(io.Discard, resp.Body, 100)
		resp.Body.Close()
	}
	r.do(http.MethodGet, r.exp.AdminURL+"/api/v1/operations")
	if round%3 != 0 {
		return
	}
	// Each fault is used up by the next call of its operation, so that
	// faults do not pile up faster than the poller consumes them.
	fault := []string{
		`{"operation":"listServices","status":503,"count":1}`,
		`{"operation":"listReplicaSets","drop_connection":true,"count":1}`,
		`{"operation":"listVPCs","malformed":true,"count":1}`,
		`{"operation":"listPeerings","latency":"300ms","count":1}`,
	}[round/3%4]
	r.exp.Sim.Fault(r.t, fault)
}

func (r *leakRun) measure() usage {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", r.exp.PID()))
	if err != nil {
		r.t.Fatal(err)
	}
	v, ok := testbin.Value(r.exp.Scrape(r.t), "go_goroutines")
	if !ok {
		r.t.Fatal("no go_goroutines")
	}
	return usage{fds: len(entries), goroutines: int(v)}
}

// sample runs at least rounds rounds of work, more until the poller has
// run minCycles cycles, measuring after each, and returns the range seen.
func (r *leakRun) sample(first, rounds int, minCycles float64) (lo, hi usage) {
	lo = usage{1 << 30, 1 << 30}
	c0 := r.cycles()
	for round := first; round < first+rounds || r.cycles()-c0 < minCycles; round++ {
		r.work(round)
		u := r.measure()
		lo.fds, hi.fds = min(lo.fds, u.fds), max(hi.fds, u.fds)
		lo.goroutines, hi.goroutines = min(lo.goroutines, u.goroutines), max(hi.goroutines, u.goroutines)
	}
	return lo, hi
}
