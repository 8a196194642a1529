package cloudsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

const (
	testProject  = "p1"
	otherProject = "p2"
)

var (
	rwCred    = Credential{AccessKey: "ak", SecretKey: "sk", APIKey: "api", ProjectID: testProject, Name: "rw"}
	roCred    = Credential{AccessKey: "ro-ak", SecretKey: "ro-sk", APIKey: "ro-api", ProjectID: testProject, Name: "ro", ReadOnly: true}
	otherCred = Credential{AccessKey: "o-ak", SecretKey: "o-sk", APIKey: "o-api", ProjectID: otherProject, Name: "other"}
)

// env is a simulator behind a test server with a fake clock.
type env struct {
	t     *testing.T
	sim   *Sim
	srv   *httptest.Server
	clock *fakeclock.Clock
}

// newEnv serves the first revision, which most tests describe; revision
// 2026 has its own tests with newEnvRev.
func newEnv(t *testing.T, timings Timings) *env {
	t.Helper()
	return newEnvRev(t, timings, Revision2024)
}

func newEnvRev(t *testing.T, timings Timings, rev string) *env {
	t.Helper()
	clock := fakeclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	sim := New(Options{
		Credentials: []Credential{rwCred, roCred, otherCred},
		Timings:     timings,
		Seed:        42,
		Clock:       clock.Now,
		Revision:    rev,
	})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return &env{t: t, sim: sim, srv: srv, clock: clock}
}

// reqOpt changes a request before it is sent.
type reqOpt func(*http.Request)

func as(c Credential) reqOpt {
	return func(r *http.Request) { r.SetBasicAuth(c.AccessKey, c.SecretKey) }
}

func bearer(key string) reqOpt {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }
}

func noAuth(r *http.Request) { r.Header.Del("Authorization") }

// do sends a request; body is sent as is when it is a string, as JSON
// otherwise, and not at all when nil. The default credential is rwCred.
func (e *env) do(method, path string, body any, opts ...reqOpt) (int, []byte, http.Header) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	as(rwCred)(req)
	for _, o := range opts {
		o(req)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp.StatusCode, raw, resp.Header
}

// must sends a request and fails the test unless the status is want.
func (e *env) must(want int, method, path string, body any, opts ...reqOpt) []byte {
	e.t.Helper()
	got, raw, _ := e.do(method, path, body, opts...)
	if got != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, want, raw)
	}
	return raw
}

// mustError sends a request and checks the status and error code.
func (e *env) mustError(wantStatus int, wantCode, method, path string, body any, opts ...reqOpt) apiclient.ErrorBody {
	e.t.Helper()
	raw := e.must(wantStatus, method, path, body, opts...)
	eb := decode[apiclient.ErrorBody](e.t, raw)
	if eb.Code != wantCode || eb.Message == "" {
		e.t.Fatalf("%s %s: error body %s, want code %s and a message", method, path, raw, wantCode)
	}
	return eb
}

func decode[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

// keys returns the top-level field names of a JSON object.
func keys(t *testing.T, raw []byte) map[string]bool {
	t.Helper()
	m := decode[map[string]json.RawMessage](t, raw)
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

const servicesPath = "/v1/projects/" + testProject + "/services"

func createBody(name string, addons ...string) map[string]any {
	if addons == nil {
		addons = []string{}
	}
	return map[string]any{"name": name, "addons": addons, "region_code": "us-east-1", "cpu_millis": 1000, "memory_gbs": 4}
}

// createService creates a service and returns its id.
func (e *env) createService(name string, addons ...string) string {
	e.t.Helper()
	svc := decode[apiclient.Service](e.t, e.must(http.StatusAccepted, "POST", servicesPath, createBody(name, addons...)))
	return svc.ServiceID
}

func (e *env) getService(id string) apiclient.Service {
	e.t.Helper()
	return decode[apiclient.Service](e.t, e.must(http.StatusOK, "GET", servicesPath+"/"+id, nil))
}

func TestRouting(t *testing.T) {
	e := newEnv(t, Timings{})
	id := e.createService("a")
	tests := []struct {
		name, method, path string
		want               int
		wantCode, allow    string
	}{
		{"unknown path", "GET", "/v1/nothing", 404, "NOT_FOUND", ""},
		{"root", "GET", "/", 404, "NOT_FOUND", ""},
		{"trailing slash", "GET", servicesPath + "/", 404, "NOT_FOUND", ""},
		{"wrong method on action", "GET", servicesPath + "/" + id + "/resize", 405, "METHOD_NOT_ALLOWED", "POST"},
		{"wrong method on collection", "PUT", servicesPath, 405, "METHOD_NOT_ALLOWED", "GET, POST"},
		{"wrong method on auth info", "POST", "/v1/auth/info", 405, "METHOD_NOT_ALLOWED", "GET"},
		{"wrong method on control", "GET", "/_sim/faults", 405, "METHOD_NOT_ALLOWED", "POST, DELETE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			got, raw, h := e.do(tt.method, tt.path, nil)
			if got != tt.want {
				t.Fatalf("status %d, want %d; body %s", got, tt.want, raw)
			}
			if eb := decode[apiclient.ErrorBody](t, raw); eb.Code != tt.wantCode {
				t.Errorf("code %q, want %q", eb.Code, tt.wantCode)
			}
			if h.Get("Allow") != tt.allow {
				t.Errorf("Allow %q, want %q", h.Get("Allow"), tt.allow)
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t, Timings{})
	id := e.createService("a")
	basicHeader := func(r *http.Request) { r.SetBasicAuth("ak", "sk") }
	tests := []struct {
		name, method, path string
		body               any
		opt                reqOpt
		want               int
		wantCode           string
	}{
		{"no credentials", "GET", servicesPath, nil, noAuth, 401, "UNAUTHORIZED"},
		{"wrong secret", "GET", servicesPath, nil, as(Credential{AccessKey: "ak", SecretKey: "nope"}), 401, "UNAUTHORIZED"},
		{"unknown access key", "GET", servicesPath, nil, as(Credential{AccessKey: "zz", SecretKey: "sk"}), 401, "UNAUTHORIZED"},
		{"empty basic", "GET", servicesPath, nil, as(Credential{}), 401, "UNAUTHORIZED"},
		{"bearer on service API", "GET", servicesPath, nil, bearer("api"), 401, "UNAUTHORIZED"},
		{"basic on auth info", "GET", "/v1/auth/info", nil, basicHeader, 401, "UNAUTHORIZED"},
		{"wrong bearer", "GET", "/v1/auth/info", nil, bearer("nope"), 401, "UNAUTHORIZED"},
		{"no credentials on auth info", "GET", "/v1/auth/info", nil, noAuth, 401, "UNAUTHORIZED"},
		{"other project read", "GET", servicesPath, nil, as(otherCred), 403, "FORBIDDEN"},
		{"other project write", "DELETE", servicesPath + "/" + id, nil, as(otherCred), 403, "FORBIDDEN"},
		{"read-only create", "POST", servicesPath, createBody("x"), as(roCred), 403, "FORBIDDEN"},
		{"read-only delete", "DELETE", servicesPath + "/" + id, nil, as(roCred), 403, "FORBIDDEN"},
		{"read-only VPC create", "POST", "/v1/projects/p1/vpcs", map[string]any{"name": "v", "cidr": "10.0.0.0/16", "region_code": "r"}, as(roCred), 403, "FORBIDDEN"},
		// Authentication comes before validation: an invalid body from
		// an unauthenticated caller is 401, not 400.
		{"401 before 400", "POST", servicesPath, "{", noAuth, 401, "UNAUTHORIZED"},
		{"403 before 400", "POST", servicesPath, "{", as(roCred), 403, "FORBIDDEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			e.mustError(tt.want, tt.wantCode, tt.method, tt.path, tt.body, tt.opt)
		})
	}
	e.t = t
	// Reads stay allowed for read-only credentials.
	e.must(200, "GET", servicesPath, nil, as(roCred))
	e.must(200, "GET", servicesPath+"/"+id, nil, as(roCred))
}

func TestAuthInfo(t *testing.T) {
	e := newEnv(t, Timings{})
	for _, c := range []Credential{rwCred, roCred} {
		raw := e.must(200, "GET", "/v1/auth/info", nil, bearer(c.APIKey))
		info := decode[apiclient.AuthInfo](t, raw)
		key := info.Key()
		if key == nil {
			t.Fatalf("auth info without api_key: %s", raw)
		}
		if info.Type != "apiKey" || key.Name != c.Name || key.Project.ID != c.ProjectID ||
			!strings.HasPrefix(key.PublicKey, "pk-") || key.Created.IsZero() || key.IssuingUser.Email == "" {
			t.Errorf("auth info for %s: %s", c.Name, raw)
		}
		if pk := key.PublicKey; strings.Contains(pk, c.AccessKey) || strings.Contains(pk, c.SecretKey) || strings.Contains(pk, c.APIKey) {
			t.Errorf("auth info for %s shows a credential as its public key: %s", c.Name, pk)
		}
	}
}

func TestRequestCounting(t *testing.T) {
	e := newEnv(t, Timings{})
	e.must(200, "GET", servicesPath, nil)
	e.must(401, "GET", servicesPath, nil, noAuth)
	e.must(403, "POST", servicesPath, createBody("x"), as(roCred))
	e.must(400, "POST", servicesPath, "{}")
	e.must(404, "GET", servicesPath+"/nope", nil)
	e.must(404, "GET", "/v1/not-an-operation", nil)
	e.must(200, "GET", "/v1/auth/info", nil, bearer("api"))

	want := map[string]int{apiclient.OpListServices: 2, apiclient.OpCreateService: 2, apiclient.OpGetService: 1, apiclient.OpGetAuthInfo: 1}
	got := e.sim.RequestCounts()
	if len(got) != len(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	for op, n := range want {
		if got[op] != n || e.sim.RequestCount(op) != n {
			t.Errorf("count of %s: %d, want %d", op, got[op], n)
		}
	}
	if n := e.sim.RequestCount(apiclient.OpDeleteService); n != 0 {
		t.Errorf("deleteService counted %d times without a request", n)
	}
	e.sim.ResetRequestCounts()
	if got := e.sim.RequestCounts(); len(got) != 0 {
		t.Errorf("counts after reset: %v", got)
	}
}

// TestEveryOperationRouted checks that each apiclient operation has exactly
// one route, so a new operation cannot be forgotten here.
func TestEveryOperationRouted(t *testing.T) {
	s := New(Options{})
	seen := map[string]int{}
	routes := s.apiRoutes()
	for _, registered := range revision2026Routes {
		routes = append(routes, registered(s)...)
	}
	for _, rt := range routes {
		seen[rt.op]++
	}
	for _, op := range apiclient.Operations {
		if seen[op] != 1 {
			t.Errorf("operation %s has %d routes, want 1", op, seen[op])
		}
	}
	if len(seen) != len(apiclient.Operations) {
		t.Errorf("%d routed operations, want %d", len(seen), len(apiclient.Operations))
	}
}
