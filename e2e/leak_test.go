package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// usage is one reading of the exporter's open file descriptors (from
// /proc/<pid>/fd) and goroutines (go_goroutines).
type usage struct{ fds, goroutines int }

// TestNoLeaks is node_exporter's TestFileDescriptorLeak, widened: the
// exporter's file descriptors and goroutines must stay within the range
// seen after a warm-up while it serves hundreds of scrapes (plain, gzip,
// service discovery, landing page), admin requests and reloads, and its API
// churns, fails and drops connections. A leak of one per request would
// show hundreds; the slack only absorbs pooled connections and the
// simulator's churn being in flight.
func TestNoLeaks(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc: cannot count file descriptors")
	}
	sim := testbin.StartSim(t, "--churn.interval=100ms", "--timing.provision=300ms", "--timing.configure=300ms",
		"--timing.delete=300ms", "--timing.replica-set=300ms", "--timing.peering=300ms")
	exp := testbin.StartWithAdmin(t, sim, "--collect.interval=1s", "--collect.transition-interval=200ms", "--collect.max-staleness=1m")
	// A client without keep-alive: every request opens and closes a
	// connection, so a connection the exporter fails to release shows.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	get := func(path string, gzip bool) {
		req, err := http.NewRequest(http.MethodGet, exp.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
	}
	// cycles counts the poll cycles the simulator has seen, failed ones
	// included.
	cycles := func() float64 {
		_, body := testbin.Get("http://" + sim + "/_sim/requests")
		var counts map[string]float64
		if err := json.Unmarshal([]byte(body), &counts); err != nil {
			t.Fatalf("simulator request counts %q: %v", body, err)
		}
		return counts["listServices"]
	}
	// work is one round of everything a busy exporter serves.
	work := func(round int) {
		for i := 0; i < 20; i++ {
			get("/metrics", i%2 == 0)
		}
		for _, path := range []string{"/", "/sd/services", "/sd/replica-sets", "/sd/poolers", "/-/ready", "/-/healthy"} {
			get(path, false)
		}
		// A half-read scrape: the client goes away mid-body.
		if resp, err := client.Get(exp.URL + "/metrics"); err == nil {
			_, _ = io.CopyN(io.Discard, resp.Body, 100)
			resp.Body.Close()
		}
		req, _ := http.NewRequest(http.MethodGet, exp.AdminURL+"/api/v1/operations", nil)
		req.Header.Set("Authorization", "Bearer "+exp.AdminToken)
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if round%3 != 0 {
			return
		}
		// One fault every third round, each used up by the next call of
		// its operation, so that they do not pile up faster than the
		// poller consumes them.
		fault := []string{
			`{"operation":"listServices","status":503,"count":1}`,
			`{"operation":"listReplicaSets","drop_connection":true,"count":1}`,
			`{"operation":"listVPCs","malformed":true,"count":1}`,
			`{"operation":"listPeerings","latency":"300ms","count":1}`,
		}[round/3%4]
		if code, body := testbin.Post("http://"+sim+"/_sim/faults", fault); code/100 != 2 {
			t.Fatalf("fault %s: %d %s", fault, code, body)
		}
	}
	measure := func() usage {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", exp.PID()))
		if err != nil {
			t.Fatal(err)
		}
		v, ok := testbin.Value(exp.Scrape(t), "go_goroutines")
		if !ok {
			t.Fatal("no go_goroutines")
		}
		return usage{fds: len(entries), goroutines: int(v)}
	}
	// sample runs rounds of work until the poller has run cycles more
	// cycles, measuring after each round, and returns the range seen.
	sample := func(firstRound, rounds int, cycles0 float64, minCycles float64) (lo, hi usage) {
		lo = usage{1 << 30, 1 << 30}
		for r := firstRound; r < firstRound+rounds || cycles()-cycles0 < minCycles; r++ {
			work(r)
			u := measure()
			lo.fds, hi.fds = min(lo.fds, u.fds), max(hi.fds, u.fds)
			lo.goroutines, hi.goroutines = min(lo.goroutines, u.goroutines), max(hi.goroutines, u.goroutines)
		}
		return lo, hi
	}

	exp.ExerciseAdmin(t, exp.Scrape(t))
	_, baseline := sample(0, 8, cycles(), 3) // warm-up: pools, caches, the gzip writer
	c0 := cycles()
	_, _ = sample(8, 40, c0, 10) // the churn: 40 rounds, at least 10 poll cycles
	if req, err := http.NewRequest(http.MethodDelete, "http://"+sim+"/_sim/faults", nil); err != nil {
		t.Fatal(err)
	} else if resp, err := client.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	lo, _ := sample(48, 8, cycles(), 2)
	const fdSlack, goroutineSlack = 8, 20
	if lo.fds > baseline.fds+fdSlack {
		t.Errorf("file descriptors grew: at least %d after the churn, at most %d after the warm-up (slack %d)", lo.fds, baseline.fds, fdSlack)
	}
	if lo.goroutines > baseline.goroutines+goroutineSlack {
		t.Errorf("goroutines grew: at least %d after the churn, at most %d after the warm-up (slack %d)", lo.goroutines, baseline.goroutines, goroutineSlack)
	}
	t.Logf("file descriptors: warm-up max %d, after churn min %d; goroutines: warm-up max %d, after churn min %d (%.0f cycles)",
		baseline.fds, lo.fds, baseline.goroutines, lo.goroutines, cycles()-c0)
	if strings.Contains(exp.Output(), "panic") {
		t.Errorf("the exporter panicked:\n%s", exp.Output())
	}
}
