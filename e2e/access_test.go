package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestWrongSettingsSayWhatToFix: a wrong secret key, or an --api.url
// without its version segment, makes the exporter not ready (naming the
// project), sets clouddb_up to 0 with its cause in clouddb_project_down_cause
// and logs one ERROR naming the setting to fix, not a WARN per collector per
// cycle.
func TestWrongSettingsSayWhatToFix(t *testing.T) {
	t.Parallel()
	sim := testbin.StartSim(t)
	for _, tc := range []struct {
		name, env, fix, cause string
	}{
		{"wrong secret", "CLOUDDB_SECRET_KEY=not-the-secret-key", "check the key pair in $CLOUDDB_ACCESS_KEY and $CLOUDDB_SECRET_KEY", "credentials"},
		{"no version segment", "CLOUDDB_API_URL=http://" + sim, "--api.url (http://" + sim + ") must end in the API's version segment", "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := append(testbin.ExporterEnv(sim), tc.env)
			p, url := testbin.StartExporterServing(t, env, "--collect.interval=1s", "--collect.transition-interval=1s")
			testbin.WaitFor(t, 30*time.Second, "clouddb_up 0", testbin.MetricEquals(url+"/metrics", "clouddb_up", 0, "project_id", testbin.SimProject))
			// A few cycles, each of which fails every part.
			testbin.WaitFor(t, 30*time.Second, "three failed cycles", func() bool {
				_, fams := testbin.Scrape(t, url)
				v, _ := testbin.Value(fams, "clouddb_exporter_api_requests_total", "operation", "listServices")
				return v >= 3
			})
			// The cause CloudDBProjectDown names, one state at 1.
			_, fams := testbin.Scrape(t, url)
			for _, cause := range []string{"credentials", "permission", "not_found", "unreachable", "error"} {
				want := 0.0
				if cause == tc.cause {
					want = 1
				}
				if v, ok := testbin.Value(fams, "clouddb_project_down_cause", "project_id", testbin.SimProject, "cause", cause); !ok || v != want {
					t.Errorf("clouddb_project_down_cause{cause=%q} %v (exported %v), want %v", cause, v, ok, want)
				}
			}
			code, body := testbin.Get(url + "/-/ready")
			if code != http.StatusServiceUnavailable || !strings.Contains(body, "project "+testbin.SimProject) {
				t.Errorf("/-/ready: %d %q, want 503 naming the project", code, body)
			}
			out := p.Output()
			if n := strings.Count(out, "level=ERROR"); n != 1 || !strings.Contains(out, tc.fix) {
				t.Errorf("%d ERROR lines, want one naming %q:\n%s", n, tc.fix, out)
			}
			if strings.Contains(out, "Collector failed") {
				t.Errorf("the refusal is logged per collector too:\n%s", out)
			}
		})
	}
}
