package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestDiscoveryAfterCredentialRotation: in project discovery mode
// (credentials, no --api.project-id) with key files, the discovery's own
// client picks up rotated files when the provider revokes the old keys:
// GET /projects keeps succeeding, so a project added afterwards is polled,
// and the discovered projects keep the new keys (no 401 after the rotation
// settles). The discovery's calls are in the API metrics, without a
// project_id. Before, GET /projects failed with 401 for ever and was not
// counted.
func TestDiscoveryAfterCredentialRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	const newAccess, newSecret = "rotated-access-key", "rotated-secret-value"
	sim := testbin.SimAt(testbin.StartSim(t, "--extra-project-id=second-project"))
	dir := t.TempDir()
	env := append([]string{"CLOUDDB_API_URL=" + sim.URL + "/v1"}, keyFiles(t, dir, testbin.SimAccessKey, testbin.SimSecretKey)...)
	p, url := startExporter(t, env, "--collect.interval=5s")

	_, fams := testbin.Scrape(t, url)
	if got := testbin.LabelValues(fams, "clouddb_project_info", "project_id"); !slices.Equal(got, []string{testbin.SimProject, "second-project"}) {
		t.Fatalf("projects polled: %v, want both of the user's", got)
	}
	if n := discoveries(fams); n < 1 {
		t.Errorf("clouddb_exporter_api_requests_total{operation=\"listProjects\",code=\"200\"} without project_id = %v, want the startup discovery counted", n)
	}

	// The provider rotates the keys and revokes the old ones; the new
	// ones are put in the files; the user gets a new project.
	sim.RotateCredential(t, testbin.SimAccessKey, newAccess, newSecret, "")
	keyFiles(t, dir, newAccess, newSecret)
	sim.AddProject(t, "third-project")
	testbin.WaitFor(t, time.Minute, "the project added after the rotation to be discovered and polled", func() bool {
		_, fams := testbin.Scrape(t, url)
		return slices.Contains(testbin.LabelValues(fams, "clouddb_project_info", "project_id"), "third-project")
	})

	// Once every client has the new keys, nothing is refused any more: a
	// discovery must not hand the running projects the keys it started
	// with. Counted over two more discoveries after a settling one.
	waitDiscoveries := func(n float64) map[string]*dto.MetricFamily {
		_, fams := testbin.Scrape(t, url)
		want := discoveries(fams) + n
		testbin.WaitFor(t, time.Minute, "more discoveries", func() bool {
			_, fams = testbin.Scrape(t, url)
			return discoveries(fams) >= want
		})
		return fams
	}
	settled := unauthorized(waitDiscoveries(1))
	fams = waitDiscoveries(2)
	if got := unauthorized(fams); got != settled {
		t.Errorf("%v API answers were 401 after the rotation settled, want none:\n%s", got-settled, p.Output())
	}
	if v, _ := testbin.Value(fams, "clouddb_exporter_config_last_reload_successful"); v != 1 {
		t.Errorf("clouddb_exporter_config_last_reload_successful = %v, want 1", v)
	}
	if !strings.Contains(p.Output(), "API credentials rotated") {
		t.Errorf("no rotation logged:\n%s", p.Output())
	}
	for _, secret := range []string{testbin.SimSecretKey, newSecret, testbin.SimAccessKey, newAccess} {
		if revealed(p.Output(), secret) {
			t.Errorf("the log gives %q away", secret)
		}
	}
}

// discoveries is the count of successful GET /projects calls, whose series
// have no project_id.
func discoveries(fams map[string]*dto.MetricFamily) float64 {
	v, _ := testbin.Value(fams, "clouddb_exporter_api_requests_total", "operation", "listProjects", "code", "200", "project_id", "")
	return v
}

// unauthorized is the count of API answers 401, of every operation and
// project.
func unauthorized(fams map[string]*dto.MetricFamily) float64 {
	var n float64
	for _, m := range fams["clouddb_exporter_api_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "code" && l.GetValue() == "401" {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
