package testbin

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Exporter is a started exporter with its admin listener.
type Exporter struct {
	*Process
	Addr, URL string
	// AdminToken is "" with --admin.web-config.file; AdminAuth is what Admin sends.
	AdminURL, AdminToken, AdminAuth string
	// Sim is nil with --simulate.
	Sim *Sim
}

// StartWithAdmin starts the exporter with an admin listener polling the
// simulator at simAddr ("": what args configure) and waits until both answer.
func StartWithAdmin(t testing.TB, simAddr string, args ...string) *Exporter {
	t.Helper()
	e := &Exporter{}
	var env []string
	if simAddr != "" {
		e.Sim = SimAt(simAddr)
		env = e.Sim.Env()
	}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--admin.web-config.file") }) {
		e.AdminToken = "e2e-admin-token-0123456789abcdef"
		e.AdminAuth = "Bearer " + e.AdminToken
		tokenFile := filepath.Join(t.TempDir(), "admin-token")
		if err := os.WriteFile(tokenFile, []byte(e.AdminToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--admin.token-file="+tokenFile)
	}
	e.Process, e.URL = startExporter(t, env, func() []string {
		e.AdminURL = "http://" + FreeAddr(t)
		return append(args[:len(args):len(args)], "--admin.listen-address="+strings.TrimPrefix(e.AdminURL, "http://"))
	})
	e.Addr = strings.TrimPrefix(e.URL, "http://")
	// Any answer will do (a TLS listener answers plain HTTP with 400).
	WaitFor(t, 30*time.Second, "the admin listener", func() bool {
		code, _ := Get(e.AdminURL + "/api/v1/operations")
		return code != 0
	})
	return e
}

// Admin sends e.AdminAuth unless headers give another ("" sends none). The
// status is 0 for a transport error.
func (e *Exporter) Admin(t testing.TB, method, path, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.AdminURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if e.AdminAuth != "" {
		req.Header.Set("Authorization", e.AdminAuth)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// MetricIs returns a WaitFor condition: the series of name with labels has value.
func (e *Exporter) MetricIs(name string, value float64, labels ...string) func() bool {
	return MetricEquals(e.URL+"/metrics", name, value, labels...)
}

// ExerciseAdmin enables a pooler, dry run and real, so the admin metrics exist.
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
		path := "/api/v1/projects/" + SimProject + "/services/" + candidates[0] + "/enablePooler" + query
		if code, _, body := e.Admin(t, http.MethodPost, path, ""); code/100 != 2 {
			t.Fatalf("admin enablePooler%s: %d %s", query, code, body)
		}
	}
}

// Scrape returns the exporter's metric families.
func (e *Exporter) Scrape(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	_, fams := Scrape(t, e.URL)
	return fams
}

// MetricNames returns every sample name, histogram and summary suffixes included.
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
