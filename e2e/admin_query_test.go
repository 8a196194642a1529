package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestAdminAmbiguousQueryRefused: a query with a ';' (which Go's query
// parser drops with its pair, and a proxy may take for a separator) is
// refused whole on every route kind. ?confirm=<id>&dry_run=true; once
// deleted a PROD service for real.
func TestAdminAmbiguousQueryRefused(t *testing.T) {
	t.Parallel()
	r := startAdmin(t, instantSim, "--admin.allow=deleteService", "--admin.allow=resizeService", "--admin.allow=stopService")
	f := demoIDs(t, r)
	p := "/api/v1/projects/" + testbin.SimProject
	orders, emb := f.service["orders-db"], f.service["embeddings"]
	if orders == "" || emb == "" {
		t.Fatalf("demo ids missing: %+v", f)
	}
	r.Sim.ResetRequests(t)
	for _, tc := range []struct{ method, path, body string }{
		{"DELETE", p + "/services/" + orders + "?confirm=" + orders + "&dry_run=true;", ""},
		{"POST", p + "/services/" + emb + "/resize?dry_run=true;x=1", `{"cpu_millis":2000,"memory_gbs":8}`},
		{"POST", p + "/services/" + emb + "/stop?confirm=" + emb + "&dry_run=true;", ""},
		{"POST", p + "/services/" + emb + "/resize?dry_run=tr%ue", `{"cpu_millis":2000,"memory_gbs":8}`},
		{"GET", "/api/v1/operations?;", ""},
		{"GET", "/api/v1/operations/x?a=1;", ""},
	} {
		code, _, body := r.Admin(t, tc.method, tc.path, tc.body)
		if code != http.StatusBadRequest || !strings.Contains(body, `"INVALID_REQUEST"`) {
			t.Errorf("%s %s: %d %s, want 400 INVALID_REQUEST", tc.method, tc.path, code, body)
		}
	}
	if w := r.Sim.WriteRequests(t); len(w) != 0 {
		t.Errorf("refused requests reached the API: %v", w)
	}
	var svc struct {
		ServiceID string `json:"service_id"`
		Status    string `json:"status"`
	}
	r.Sim.APIGet(t, "/projects/"+testbin.SimProject+"/services/"+orders, &svc)
	if svc.ServiceID != orders || svc.Status == "DELETING" {
		t.Errorf("the PROD service after the refused delete: %+v", svc)
	}
}
