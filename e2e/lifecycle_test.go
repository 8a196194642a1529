package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestReloadLifecycle: in project discovery mode, where a reload is a GET
// /projects, POST /-/reload is refused without --web.enable-lifecycle;
// with it, a cross-site request is refused and a burst of reloads makes at
// most one upstream call (before, 200 reloads were 200 more calls).
func TestReloadLifecycle(t *testing.T) {
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	env := []string{"CLOUDDB_API_URL=" + sim.URL + "/v1", "CLOUDDB_ACCESS_KEY=" + testbin.SimAccessKey, "CLOUDDB_SECRET_KEY=" + testbin.SimSecretKey}
	// No rediscovery during the test: only reloads call GET /projects.
	_, off := startExporter(t, env, "--collect.interval=1h")
	_, on := startExporter(t, env, "--collect.interval=1h", "--web.enable-lifecycle")
	discoveries := func() int { return sim.Requests(t)["listProjects"] }
	before := discoveries()

	if code, body := testbin.Post(off+"/-/reload", ""); code != http.StatusForbidden || !strings.Contains(body, "--web.enable-lifecycle") {
		t.Errorf("without --web.enable-lifecycle: %d %q, want 403 naming the flag", code, body)
	}
	req, err := http.NewRequest(http.MethodPost, on+"/-/reload", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "https://elsewhere.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site reload: %d, want 403", resp.StatusCode)
	}
	if n := discoveries(); n != before {
		t.Fatalf("refused reloads made %d GET /projects", n-before)
	}

	codes := map[int]int{}
	for range 50 {
		code, _ := testbin.Post(on+"/-/reload", "")
		codes[code]++
	}
	if codes[http.StatusOK] < 1 || codes[http.StatusTooManyRequests] < 1 || codes[http.StatusOK]+codes[http.StatusTooManyRequests] != 50 {
		t.Errorf("50 reloads in a row answered %v, want 200 for the first and 429 for most", codes)
	}
	if n := discoveries() - before; n != codes[http.StatusOK] {
		t.Errorf("50 reloads in a row made %d GET /projects, want one per 200 (%d)", n, codes[http.StatusOK])
	}
}
