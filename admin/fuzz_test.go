package admin

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzAdminRequest sends arbitrary methods, paths, queries, bodies and
// idempotency keys through the surface, authenticated, in front of the
// simulator: no input may yield a 5xx or a panic.
func FuzzAdminRequest(f *testing.F) {
	p := "projects/" + testProject
	for _, seed := range []struct{ method, path, query, body, key string }{
		{"POST", p + "/services", "", `{"name":"n","addons":["ai"],"region_code":"r","cpu_millis":1,"memory_gbs":1}`, "k"},
		{"POST", p + "/services", "dry_run=true", `{"name":"n","addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}`, ""},
		{"POST", p + "/services/svc/resize", "", `{"cpu_millis":1e3,"memory_gbs":-1}`, ""},
		{"POST", p + "/services/svc/updatePassword", "dry_run=1", `{"password":"\u0000"}`, ""},
		{"DELETE", p + "/services/svc", "confirm=svc", ``, ""},
		{"DELETE", p + "/services/svc/replicaSets/rs", "confirm=rs&confirm=rs", `{}`, ""},
		{"POST", p + "/vpcs", "", `{"name":"v","cidr":"10.0.0.0/33","region_code":"r"}`, "k2"},
		{"POST", p + "/vpcs/v/peerings", "", `{"peer_account_id":1}`, ""},
		{"POST", p + "/services/%2F/setHA", "", `{"replica_count":99999999999999999999}`, ""},
		{"GET", "operations", "", ``, ""},
		{"GET", "operations/x", "a=b", ``, ""},
		{"PATCH", p + "/services", "", `[`, ""},
	} {
		f.Add(seed.method, seed.path, seed.query, seed.body, seed.key)
	}
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, method, path, query, body, key string) {
		u, err := url.Parse("/api/v1/" + path)
		if err != nil || !validMethod(method) {
			return
		}
		u.RawQuery = query
		req := httptest.NewRequest(http.MethodGet, "/", strings.NewReader(body))
		req.Method, req.URL, req.RequestURI = method, u, u.RequestURI()
		req.Header.Set("Authorization", "Bearer "+testToken)
		if key != "" {
			req.Header.Set(idempotencyHeader, key)
		}
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s?%s %q: %d %s", method, path, query, body, rec.Code, rec.Body)
		}
	})
}

func validMethod(m string) bool {
	return m != "" && !strings.ContainsFunc(m, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) })
}
