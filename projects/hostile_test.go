package projects

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

const (
	hostileAccess = "AKhostile-access"
	hostileSecret = "SKhostile-secret-value"
	hostileAPIKey = "APIKEYhostile-bearer"
)

// hostileAPI answers the poller's reads with its credentials echoed in
// every text that becomes a label, and a name of 900 KB.
func hostileAPI(t *testing.T) *httptest.Server {
	t.Helper()
	answers := map[string]any{
		"/v1/auth/info": map[string]any{"api_key": map[string]any{
			"name": "key " + hostileSecret, "public_key": hostileAccess,
			"project":      map[string]any{"id": "p", "name": "proj " + hostileAPIKey, "plan_type": hostileSecret},
			"issuing_user": map[string]any{"id": "u-" + hostileAccess},
		}},
		"/v1/projects/p/services": []any{
			map[string]any{"service_id": "svc-1", "name": "db " + hostileSecret, "status": "READY", "region_code": hostileAccess,
				"endpoint": map[string]any{"host": hostileAPIKey + ".example.net", "port": 5432}},
			map[string]any{"service_id": "svc-2", "name": strings.Repeat("n", 900<<10), "status": "READY"},
		},
		"/v1/projects/p/vpcs": []any{map[string]any{"id": "vpc-1", "name": "vpc " + hostileSecret, "cidr": "10.0.0.0/16"}},
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.URL.Path]
		if !ok {
			body = []any{} // replica sets, peerings
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
}

// TestHostileAnswersNeverReachMetrics: the credentials an API echoes in
// the texts of its answers (auth info, names, hosts) are redacted before
// they become labels, and a text of 900 KB is cut (docs/security.md).
func TestHostileAnswersNeverReachMetrics(t *testing.T) {
	srv := hostileAPI(t)
	defer srv.Close()
	api := apimetrics.New(nil)
	expo := exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, expo, "test")
	defer m.Stop()
	p := project(srv.URL+"/v1", "p")
	p.Credentials = config.Credentials{AccessKey: hostileAccess, SecretKey: hostileSecret, APIKey: hostileAPIKey}
	if err := m.Apply([]config.Project{p}); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, 10*time.Second, "the first cycle", func() bool { return m.NotReady() == "" })

	rec := httptest.NewRecorder()
	expo.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := rec.Body.String()
	for _, want := range []string{`clouddb_api_key_info{`, `public_key="<redacted>"`, `service_id="svc-2"`, apiclient.TruncatedMark,
		`clouddb_exporter_api_texts_truncated_total{operation="listServices",project_id="p"} 1`} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, key := range []string{hostileAccess, hostileSecret, hostileAPIKey} {
		if strings.Contains(out, key) {
			t.Errorf("/metrics reveals %q", key)
		}
	}
	for line := range strings.Lines(out) {
		if len(line) > 4<<10 {
			t.Errorf("/metrics has a line of %d bytes: %.100s...", len(line), line)
		}
	}
}
