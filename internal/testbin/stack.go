package testbin

import (
	"net/http"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Credentials the standalone simulator is started with, and the exporter
// polls it with, in whole-binary tests; SimProject is its demo project.
const (
	SimAccessKey = "e2e-access"
	SimSecretKey = "e2e-secret-value"
	SimAPIKey    = "e2e-api-key-value"
	SimProject   = "demo-project"
)

// StartSim starts the standalone simulator (cmd/cloudsim) with the demo
// scenario on a free loopback port, waits until it answers and returns its
// address.
func StartSim(t testing.TB, args ...string) string {
	t.Helper()
	addr := FreeAddr(t)
	env := []string{"CLOUDSIM_ACCESS_KEY=" + SimAccessKey, "CLOUDSIM_SECRET_KEY=" + SimSecretKey, "CLOUDSIM_API_KEY=" + SimAPIKey}
	Start(t, Build(t, "./cmd/cloudsim"), env, append([]string{"--web.listen-address=" + addr}, args...)...)
	WaitFor(t, 30*time.Second, "the simulator", func() bool {
		code, _ := Get("http://" + addr + "/_sim/healthz")
		return code == http.StatusOK
	})
	return addr
}

// ExporterEnv is the environment that points the exporter at the simulator
// at simAddr, with its credentials.
func ExporterEnv(simAddr string) []string {
	return []string{
		"CLOUDDB_API_URL=http://" + simAddr + "/v1", "CLOUDDB_PROJECT_ID=" + SimProject,
		"CLOUDDB_ACCESS_KEY=" + SimAccessKey, "CLOUDDB_SECRET_KEY=" + SimSecretKey, "CLOUDDB_API_KEY=" + SimAPIKey,
	}
}

// StartExporter starts the exporter on a free loopback port with env and
// args, waits until /-/ready answers 200 (failing at once if it exits) and
// returns the process and its base URL.
func StartExporter(t testing.TB, env []string, args ...string) (*Process, string) {
	t.Helper()
	addr := FreeAddr(t)
	p := Start(t, Build(t, "."), env, append([]string{"--web.listen-address=" + addr}, args...)...)
	url := "http://" + addr
	WaitFor(t, 60*time.Second, "the exporter to be ready", func() bool {
		if p.Exited() {
			t.Fatalf("the exporter exited:\n%s", p.Output())
		}
		code, _ := Get(url + "/-/ready")
		return code == http.StatusOK
	})
	return p, url
}

// Scrape fetches and parses url's /metrics, failing the test if it cannot.
func Scrape(t testing.TB, url string) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	code, body := Get(url + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	fams, err := Families(body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return body, fams
}

// LabelValues returns the sorted distinct values of label key of the
// series of family name whose value is 1 and whose labels include match
// (name, value pairs): for example the services whose status is READY.
func LabelValues(fams map[string]*dto.MetricFamily, name, key string, match ...string) []string {
	var out []string
	for _, m := range fams[name].GetMetric() {
		if value(m) != 1 || !matches(m, match) {
			continue
		}
		for _, lp := range m.GetLabel() {
			if lp.GetName() == key && !slices.Contains(out, lp.GetValue()) {
				out = append(out, lp.GetValue())
			}
		}
	}
	slices.Sort(out)
	return out
}
