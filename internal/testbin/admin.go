package testbin

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// Exporter is a started exporter with its admin listener.
type Exporter struct {
	*Process
	// Addr is its loopback host:port, URL the same as http://host:port.
	Addr, URL string
	// AdminURL is the admin listener's base URL and AdminToken its bearer
	// token.
	AdminURL, AdminToken string
}

// StartWithAdmin starts the exporter with args and an admin listener
// (bearer token) and waits until it is ready. With simAddr it polls that
// simulator's demo project with the simulator's credentials; with an empty
// simAddr, args must configure it (--simulate).
func StartWithAdmin(t testing.TB, simAddr string, args ...string) *Exporter {
	t.Helper()
	var env []string
	if simAddr != "" {
		env = ExporterEnv(simAddr)
	}
	e := &Exporter{AdminURL: "http://" + FreeAddr(t), AdminToken: "e2e-admin-token-0123456789abcdef"}
	tokenFile := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(tokenFile, []byte(e.AdminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--admin.listen-address="+strings.TrimPrefix(e.AdminURL, "http://"), "--admin.token-file="+tokenFile)
	e.Process, e.URL = StartExporter(t, env, args...)
	e.Addr = strings.TrimPrefix(e.URL, "http://")
	return e
}

// ExerciseAdmin makes the admin surface's metrics exist: it enables the
// pooler of a READY service that has none and is not in avoid, once as a
// dry run and once for real (the operation duration histogram only records
// accepted operations). fams is a scrape of the exporter.
func (e *Exporter) ExerciseAdmin(t testing.TB, fams map[string]*dto.MetricFamily, avoid ...string) {
	t.Helper()
	withPooler := LabelValues(fams, "clouddb_service_connection_pooler_enabled", "service_id")
	candidates := slices.DeleteFunc(LabelValues(fams, "clouddb_service_status", "service_id", "status", "READY"), func(id string) bool {
		return slices.Contains(avoid, id) || slices.Contains(withPooler, id)
	})
	if len(candidates) == 0 {
		t.Fatal("the demo lacks a READY service without a pooler to exercise the admin surface with")
	}
	for _, query := range []string{"?dry_run=true", ""} {
		u := e.AdminURL + "/api/v1/projects/" + SimProject + "/services/" + candidates[0] + "/enablePooler" + query
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
		if resp.StatusCode/100 != 2 {
			t.Fatalf("admin enablePooler%s: %d", query, resp.StatusCode)
		}
	}
}

// Scrape returns the exporter's metric families.
func (e *Exporter) Scrape(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	_, fams := Scrape(t, e.URL)
	return fams
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
