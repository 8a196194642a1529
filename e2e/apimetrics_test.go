package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// countedRequests sums clouddb_exporter_api_requests_total of project by
// operation, and by operation for the codes in codes.
func countedRequests(fams map[string]*dto.MetricFamily, project string, codes ...string) map[string]int {
	out := map[string]int{}
	for _, m := range fams["clouddb_exporter_api_requests_total"].GetMetric() {
		var op, code, proj string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "operation":
				op = l.GetValue()
			case "code":
				code = l.GetValue()
			case "project_id":
				proj = l.GetValue()
			}
		}
		if proj != project || (len(codes) > 0 && !slices.Contains(codes, code)) {
			continue
		}
		if n := int(m.GetCounter().GetValue()); n > 0 {
			out[op] += n
		}
	}
	return out
}

// TestAPIMetricsCountEveryRequest: against an upstream that serves
// malformed and truncated answers, breaks answers off after the headers
// or mid-body and drops kept-alive connections, the requests the
// simulator saw equal the requests the exporter counted, operation by
// operation, and every failure is counted once with its outcome:
// decode_error for a complete answer that does not decode, error for one
// that never completes. Before, the malformed answers were 200s and Go's
// transport resent the dropped reads unseen.
func TestAPIMetricsCountEveryRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	_, url := startExporter(t, sim.Env(), "--collect.interval=2s", "--collect.transition-interval=1h")
	project := testbin.SimProject

	// waitFailures waits until the exporter has counted want failures
	// (by operation, with codes) more than at the start.
	waitFailures := func(what string, want map[string]int, codes ...string) {
		t.Helper()
		_, fams := testbin.Scrape(t, url)
		base := countedRequests(fams, project, codes...)
		var got map[string]int
		testbin.WaitFor(t, 45*time.Second, what, func() bool {
			_, fams := testbin.Scrape(t, url)
			got = countedRequests(fams, project, codes...)
			for op, n := range want {
				if got[op]-base[op] < n {
					return false
				}
			}
			return true
		})
		// Each fault served cost one counted failure, not more.
		for op, n := range want {
			if d := got[op] - base[op]; d != n {
				t.Errorf("%s: %s counted %d failures %v, want %d (one per fault served)", what, op, d, codes, n)
			}
		}
	}

	// A complete answer that does not decode: decode_error, once each.
	sim.Fault(t, `{"operation":"listServices","malformed":true,"count":2}`)
	sim.Fault(t, `{"operation":"listVPCs","truncated":true,"count":2}`)
	waitFailures("the malformed and truncated answers", map[string]int{"listServices": 2, "listVPCs": 2}, "decode_error")
	// Answers that break off: error, once each (and retried, counted).
	sim.Fault(t, `{"operation":"getAuthInfo","drop_after_headers":true,"count":2}`)
	sim.Fault(t, `{"operation":"listVPCs","drop_mid_body":true,"count":2}`)
	waitFailures("the answers broken off", map[string]int{"getAuthInfo": 2, "listVPCs": 2}, "error")
	// Kept-alive connections dropped after the request was read: the
	// transport must not resend the read behind the exporter's back.
	sim.Fault(t, `{"operation":"listServices","drop_connection":true,"on_reuse":true,"count":3}`)
	waitFailures("the connections dropped on reuse", map[string]int{"listServices": 3}, "error")

	// Between cycles, what the simulator saw is what the exporter counted.
	var saw, counted map[string]int
	testbin.WaitFor(t, 30*time.Second, "a quiet moment where the simulator's and the exporter's counts agree", func() bool {
		before := sim.Requests(t)
		_, fams := testbin.Scrape(t, url)
		counted = countedRequests(fams, project)
		saw = sim.Requests(t)
		return maps.Equal(before, saw) && maps.Equal(saw, counted)
	})
	if t.Failed() {
		t.Logf("simulator saw %v, exporter counted %v", saw, counted)
	}
}

// TestKeyRotationsLoseNoCall: ten key rotations in a row, each while
// requests are under way (every request takes 300 ms upstream, and the key
// files are checked every 50 ms), lose no call: a request sent with the
// old keys and refused after the new ones were installed is retried with
// them, whoever installed them. Before, the 401 hook compared the files
// with the client's current keys, found nothing new, and the call failed.
func TestKeyRotationsLoseNoCall(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	const rotations = 10
	sim := testbin.SimAt(testbin.StartSim(t))
	dir := t.TempDir()
	env := append([]string{"CLOUDDB_API_URL=http://" + sim.Addr + "/v1", "CLOUDDB_API_PROJECT_ID=" + testbin.SimProject},
		keyFiles(t, dir, testbin.SimAccessKey, testbin.SimSecretKey)...)
	p, url := startExporter(t, env, "--collect.interval=2s", "--collect.transition-interval=1h", "--api.credentials-check-interval=50ms")
	sim.Fault(t, `{"latency":"300ms"}`)

	access := testbin.SimAccessKey
	for i := range rotations {
		// A rotation as docs/security.md describes it: the provider
		// issues new keys, they are put in the files, then the provider
		// revokes the old ones: requests in flight with the old keys get
		// 401. The exporter never holds keys the provider does not know
		// yet, however slowly the test runs (rotating in the simulator
		// after writing the files lost a call when that took longer than
		// a request).
		nextAccess, nextSecret := "rotated-access-"+strconv.Itoa(i), "rotated-secret-value-"+strconv.Itoa(i)
		sim.IssueCredential(t, access, nextAccess, nextSecret, "")
		keyFiles(t, dir, nextAccess, nextSecret)
		sim.RevokeCredential(t, access)
		access = nextAccess
		// Longer than a request and its retry after a 401.
		time.Sleep(1500 * time.Millisecond)
	}
	// One more cycle, so that a call made just after the last rotation
	// has its outcome logged.
	_, fams := testbin.Scrape(t, url)
	cycles, _ := testbin.Value(fams, "clouddb_exporter_api_requests_total", "operation", "listServices", "code", "200")
	testbin.WaitFor(t, 30*time.Second, "one more cycle", func() bool {
		_, fams = testbin.Scrape(t, url)
		v, _ := testbin.Value(fams, "clouddb_exporter_api_requests_total", "operation", "listServices", "code", "200")
		return v > cycles
	})

	out := p.Output()
	if strings.Contains(out, "Collector failed") {
		t.Errorf("calls were lost across the rotations:\n%s", grepLines(out, "Collector failed"))
	}
	refused := unauthorized(fams)
	retried := 0.0
	for _, m := range fams["clouddb_exporter_api_retries_total"].GetMetric() {
		retried += m.GetCounter().GetValue()
	}
	if refused == 0 {
		t.Errorf("no request was refused: no rotation crossed a request in flight, the test proved nothing")
	}
	if retried < refused {
		t.Errorf("%v requests refused with 401, %v retried: every refused request must be retried", refused, retried)
	}
	if n := strings.Count(out, "API credentials rotated"); n < rotations {
		t.Errorf("%d rotations logged, want %d", n, rotations)
	}
	for _, m := range fams["clouddb_exporter_collector_success"].GetMetric() {
		if m.GetGauge().GetValue() != 1 {
			t.Errorf("collector %v failed", m.GetLabel())
		}
	}
	t.Logf("%v requests refused with 401 across %d rotations, all retried", refused, rotations)
}

// grepLines returns the lines of text that contain s.
func grepLines(text, s string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			fmt.Fprintln(&b, line)
		}
	}
	return b.String()
}
