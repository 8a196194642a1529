package testbin

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Credentials and demo project of the standalone simulator in tests.
const (
	SimAccessKey = "e2e-access"
	SimSecretKey = "e2e-secret-value"
	SimAPIKey    = "e2e-api-key-value"
	SimProject   = "demo-project"
)

// StartSim starts the standalone demo simulator on a free port.
func StartSim(t testing.TB, args ...string) string {
	t.Helper()
	env := []string{"CLOUDSIM_ACCESS_KEY=" + SimAccessKey, "CLOUDSIM_SECRET_KEY=" + SimSecretKey, "CLOUDSIM_API_KEY=" + SimAPIKey}
	_, addr := startOnFreePort(t, "the simulator", 30*time.Second, func(addr string) *Process {
		return Start(t, Build(t, "./cmd/cloudsim"), env, append([]string{"--web.listen-address=" + addr}, args...)...)
	}, func(addr string) bool {
		code, _ := Get("http://" + addr + "/_sim/healthz")
		return code == http.StatusOK
	})
	return addr
}

// startOnFreePort retries on another port: a free port may be taken before
// the process binds it.
func startOnFreePort(t testing.TB, what string, timeout time.Duration, start func(addr string) *Process, ready func(addr string) bool) (*Process, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := FreeAddr(t)
		p := start(addr)
		retry := false
		WaitFor(t, timeout, what+" to be ready", func() bool {
			if p.Exited() {
				if attempt < 3 && strings.Contains(p.Output(), "address already in use") {
					retry = true
					return true
				}
				t.Fatalf("%s exited:\n%s", what, p.Output())
			}
			return ready(addr)
		})
		if !retry {
			return p, addr
		}
		t.Logf("%s: %s was taken, starting again on another port", what, addr)
	}
}

// ExporterEnv points the exporter at the simulator at simAddr.
func ExporterEnv(simAddr string) []string {
	return []string{
		"CLOUDDB_API_URL=http://" + simAddr + "/v1", "CLOUDDB_API_PROJECT_ID=" + SimProject,
		"CLOUDDB_ACCESS_KEY=" + SimAccessKey, "CLOUDDB_SECRET_KEY=" + SimSecretKey, "CLOUDDB_API_KEY=" + SimAPIKey,
	}
}

// StartExporter starts the exporter on a free port and waits for /-/ready.
func StartExporter(t testing.TB, env []string, args ...string) (*Process, string) {
	t.Helper()
	return startExporter(t, env, func() []string { return args })
}

// StartExporterServing waits for /metrics, not readiness.
func StartExporterServing(t testing.TB, env []string, args ...string) (*Process, string) {
	t.Helper()
	return startExporterUntil(t, "/metrics", env, func() []string { return args })
}

// args is called per attempt so that its addresses change too.
func startExporter(t testing.TB, env []string, args func() []string) (*Process, string) {
	t.Helper()
	return startExporterUntil(t, "/-/ready", env, args)
}

func startExporterUntil(t testing.TB, path string, env []string, args func() []string) (*Process, string) {
	t.Helper()
	p, addr := startOnFreePort(t, "the exporter", 60*time.Second, func(addr string) *Process {
		return Start(t, Build(t, "."), env, append([]string{"--web.listen-address=" + addr}, args()...)...)
	}, func(addr string) bool {
		code, _ := Get("http://" + addr + path)
		return code == http.StatusOK
	})
	return p, "http://" + addr
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

// LabelValues returns the sorted values of key of name's series at 1 matching match.
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
