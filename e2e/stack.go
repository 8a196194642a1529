// Package e2e runs the project's binaries together with a real Prometheus:
// the standalone simulator, the exporter and Prometheus loading the shipped
// alerting rules (prometheus_test.go). The helpers in this file start the
// simulator and the exporter on loopback and are shared with the dashboards
// tests, which need the set of metric names the real binary exports.
package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// Credentials shared by the standalone simulator and the exporter in tests.
const (
	accessKey = "e2e-access"
	secretKey = "e2e-secret-value"
	apiKey    = "e2e-api-key-value"
	// ProjectID is the project of the simulator's demo scenario.
	ProjectID = "demo-project"
)

// RepoRoot is the repository root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// StartSim starts the standalone simulator (cmd/cloudsim) with the demo
// scenario on a free loopback port and returns its address.
func StartSim(t testing.TB, args ...string) string {
	t.Helper()
	addr := testbin.FreeAddr(t)
	env := []string{"CLOUDSIM_ACCESS_KEY=" + accessKey, "CLOUDSIM_SECRET_KEY=" + secretKey, "CLOUDSIM_API_KEY=" + apiKey}
	testbin.Start(t, testbin.Build(t, "./cmd/cloudsim"), env, append([]string{"--web.listen-address=" + addr}, args...)...)
	testbin.WaitFor(t, 30*time.Second, "the simulator", func() bool {
		code, _ := testbin.Get("http://" + addr + "/_sim/healthz")
		return code == http.StatusOK
	})
	return addr
}

// Exporter is a started exporter.
type Exporter struct {
	*testbin.Process
	// Addr is its loopback host:port, URL the same as http://host:port.
	Addr, URL string
	// AdminURL is the admin listener's base URL and AdminToken its bearer
	// token, both empty unless the admin surface was enabled.
	AdminURL, AdminToken string
}

// StartExporter starts the exporter with args and waits until it is ready.
// With simAddr it polls that simulator's demo project with the simulator's
// credentials; with an empty simAddr, args must configure it (--simulate).
func StartExporter(t testing.TB, simAddr string, args ...string) *Exporter {
	t.Helper()
	var env []string
	if simAddr != "" {
		env = []string{
			"CLOUDDB_API_URL=http://" + simAddr + "/v1", "CLOUDDB_PROJECT_ID=" + ProjectID,
			"CLOUDDB_ACCESS_KEY=" + accessKey, "CLOUDDB_SECRET_KEY=" + secretKey, "CLOUDDB_API_KEY=" + apiKey,
		}
	}
	e := &Exporter{Addr: testbin.FreeAddr(t)}
	e.URL = "http://" + e.Addr
	args = append([]string{"--web.listen-address=" + e.Addr}, args...)
	if AdminSupported(t) {
		e.AdminURL = "http://" + testbin.FreeAddr(t)
		e.AdminToken = "e2e-admin-token-0123456789abcdef"
		tokenFile := filepath.Join(t.TempDir(), "admin-token")
		if err := os.WriteFile(tokenFile, []byte(e.AdminToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--admin.listen-address="+strings.TrimPrefix(e.AdminURL, "http://"), "--admin.token-file="+tokenFile)
	}
	e.Process = testbin.Start(t, testbin.Build(t, "."), env, args...)
	testbin.WaitFor(t, 60*time.Second, "the exporter to be ready", func() bool {
		if e.Exited() {
			t.Fatalf("the exporter exited:\n%s", e.Output())
		}
		code, _ := testbin.Get(e.URL + "/-/ready")
		return code == http.StatusOK
	})
	return e
}

// AdminSupported reports whether the exporter binary has the admin write
// surface (issue 4): --admin.listen-address in its --help.
func AdminSupported(t testing.TB) bool {
	t.Helper()
	_, out := testbin.Run(t, testbin.Build(t, "."), nil, "--help")
	return strings.Contains(out, "--admin.listen-address")
}

// AdminPooler makes one admin request, enablePooler of serviceID (a dry
// run or for real), and returns its status code. The admin metrics only
// exist once a request was made: requests_total counts every request,
// dry runs included, and the operation duration histogram only accepted
// operations.
func (e *Exporter) AdminPooler(t testing.TB, serviceID string, dryRun bool) int {
	t.Helper()
	u := e.AdminURL + "/api/v1/projects/" + ProjectID + "/services/" + serviceID + "/enablePooler"
	if dryRun {
		u += "?dry_run=true"
	}
	req, err := http.NewRequest(http.MethodPost, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("admin request: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Scrape returns the exporter's metric families.
func (e *Exporter) Scrape(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := testbin.Get(e.URL + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	fams, err := testbin.Families(body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// LabelValues returns the values of label key of the series of family name
// whose labels include match (name, value pairs) and whose value is 1.
func LabelValues(fams map[string]*dto.MetricFamily, name, key string, match ...string) []string {
	var out []string
	for _, m := range fams[name].GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		ok := m.GetGauge().GetValue() == 1
		for i := 0; i+1 < len(match); i += 2 {
			ok = ok && labels[match[i]] == match[i+1]
		}
		if ok && !slices.Contains(out, labels[key]) {
			out = append(out, labels[key])
		}
	}
	slices.Sort(out)
	return out
}

// MetricNames returns every sample name the families expose: family names,
// plus _bucket, _sum and _count for histograms and _sum, _count for
// summaries.
func MetricNames(fams map[string]*dto.MetricFamily) map[string]bool {
	names := map[string]bool{}
	for name, mf := range fams {
		names[name] = true
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	return names
}
