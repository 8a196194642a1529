package admin

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestAmbiguousQueryRefused: a query that url.ParseQuery would read only in
// part (a ';', a bad escape) or that parsers read differently (an empty key,
// a parameter without a value, a stray '&') is refused on every route
// kind, with nothing sent upstream: ?confirm=<id>&dry_run=true; must not
// delete a PROD service for real.
func TestAmbiguousQueryRefused(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	orders := d.service["orders-db"]
	emb := d.service["embeddings"]
	rs := d.rs["metrics-read"]
	resize := p + "/services/" + emb + "/resize"
	for _, tc := range []struct {
		name, method, path, body, want string
	}{
		{"delete with confirm, dry_run ending in ';'", "DELETE", p + "/services/" + orders + "?confirm=" + orders + "&dry_run=true;", "", "';'"},
		{"delete with ';' as a separator", "DELETE", p + "/services/" + orders + "?confirm=" + orders + ";dry_run=true", "", "';'"},
		{"replica set delete", "DELETE", p + "/services/" + rs[0] + "/replicaSets/" + rs[1] + "?confirm=" + rs[1] + "&dry_run=1;", "", "';'"},
		{"POST write with ';'", "POST", resize + "?dry_run=true;x=1", `{"cpu_millis":2000,"memory_gbs":8}`, "';'"},
		{"guarded stop with ';'", "POST", p + "/services/" + emb + "/stop?confirm=" + emb + "&dry_run=true;", "", "';'"},
		{"raw '%'", "POST", resize + "?dry_run=tr%ue", `{"cpu_millis":2000,"memory_gbs":8}`, "percent"},
		{"bad escape in dry_run", "POST", resize + "?dry_run=%", `{"cpu_millis":2000,"memory_gbs":8}`, "percent"},
		{"dry_run without a value", "POST", resize + "?dry_run=", `{"cpu_millis":2000,"memory_gbs":8}`, "dry_run: needs a value"},
		{"dry_run without '='", "POST", resize + "?dry_run", `{"cpu_millis":2000,"memory_gbs":8}`, "dry_run: needs a value"},
		{"empty key", "POST", resize + "?=true&dry_run=true", `{"cpu_millis":2000,"memory_gbs":8}`, "without a name"},
		{"stray '&'", "POST", resize + "?dry_run=true&&x", `{"cpu_millis":2000,"memory_gbs":8}`, "empty parameter"},
		{"trailing '&'", "DELETE", p + "/services/" + orders + "?confirm=" + orders + "&", "", "empty parameter"},
		{"escaped key", "POST", resize + "?dry%5Frun=true", `{"cpu_millis":2000,"memory_gbs":8}`, "unknown query parameter"},
		{"repeated dry_run", "POST", resize + "?dry_run=true&dry_run=false", `{"cpu_millis":2000,"memory_gbs":8}`, "more than once"},
		{"list operations with ';'", "GET", "/api/v1/operations?;", "", "query"},
		{"list operations with a bad escape", "GET", "/api/v1/operations?%zz", "", "query"},
		{"get operation with a parameter", "GET", "/api/v1/operations/x?a=b", "", "query"},
		{"get operation with ';'", "GET", "/api/v1/operations/x?;", "", "query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.do(tc.method, tc.path, tc.body)
			if a.status != http.StatusBadRequest || a.json(t)["code"] != codeInvalidRequest || !strings.Contains(a.json(t)["message"].(string), tc.want) {
				t.Errorf("%s %s: %d %s, want 400 INVALID_REQUEST with %q", tc.method, tc.path, a.status, a.body, tc.want)
			}
			if sent := e.sent(); len(sent) != 0 {
				t.Errorf("sent upstream: %v", sent)
			}
		})
	}
	if _, err := e.client.GetService(context.Background(), orders); err != nil {
		t.Errorf("the PROD service is gone: %v", err)
	}
	if strings.Contains(e.audit.String(), `"event":"accepted"`) {
		t.Errorf("a refused request was audited as sent:\n%s", e.audit.String())
	}
	// The plain forms still work.
	if a := e.do("POST", resize+"?dry_run=true", `{"cpu_millis":2000,"memory_gbs":8}`); a.status != http.StatusOK {
		t.Errorf("plain dry run: %d %s", a.status, a.body)
	}
	if a := e.do("GET", "/api/v1/operations?", ""); a.status != http.StatusOK {
		t.Errorf("list with an empty query: %d %s", a.status, a.body)
	}
	if sent := e.sent(); sent[apiclient.OpResizeService] != 0 {
		t.Errorf("a dry run sent %v", sent)
	}
}
