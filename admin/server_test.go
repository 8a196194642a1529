package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/crypto/bcrypt"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// route is a request of the validation table.
type route struct {
	method, path string
	bad          string // an invalid body
}

func TestValidation(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	svc := p + "/services/" + d.service["embeddings"]
	create := func(body string) route { return route{method: "POST", path: p + "/services", bad: body} }
	rs := d.rs["orders-read"]
	rsPath := p + "/services/" + rs[0] + "/replicaSets/" + rs[1]
	for _, tc := range []struct {
		name  string
		r     route
		field string
	}{
		{"missing name", create(`{"addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}`), "name: is required"},
		{"null name", create(`{"name":null,"addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}`), "name: is required"},
		{"blank name", create(`{"name":" \t","addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}`), "name: must not be blank"},
		{"long name", create(`{"name":"` + strings.Repeat("é", 129) + `","addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}`), "name: must be at most 128"},
		{"name of 128 runes ok but cpu missing", create(`{"name":"` + strings.Repeat("é", 128) + `","addons":[],"region_code":"r","memory_gbs":1}`), "cpu_millis: is required"},
		{"addons missing", create(`{"name":"n","region_code":"r","cpu_millis":1,"memory_gbs":1}`), "addons: is required"},
		{"addons repeated", create(`{"name":"n","addons":["ai","ai"],"region_code":"r","cpu_millis":1,"memory_gbs":1}`), "addons: must not repeat"},
		{"addons not strings", create(`{"name":"n","addons":[1],"region_code":"r","cpu_millis":1,"memory_gbs":1}`), "addons"},
		{"cpu as a non-digit string", create(`{"name":"n","addons":[],"region_code":"r","cpu_millis":"1k","memory_gbs":1}`), "cpu_millis: must be an integer"},
		{"cpu fractional", create(`{"name":"n","addons":[],"region_code":"r","cpu_millis":1.5,"memory_gbs":1}`), "cpu_millis: must be an integer"},
		{"cpu zero", create(`{"name":"n","addons":[],"region_code":"r","cpu_millis":0,"memory_gbs":1}`), "cpu_millis: must be an integer >= 1"},
		{"memory negative", create(`{"name":"n","addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":-4}`), "memory_gbs: must be an integer >= 1"},
		{"shared with a size", create(`{"name":"n","addons":[],"cpu_millis":"shared","memory_gbs":"4"}`), `both be "shared"`},
		{"replica_count negative", create(`{"name":"n","addons":[],"cpu_millis":"1000","memory_gbs":"4","replica_count":-1}`), "replica_count: must be >= 0"},
		{"environment_tag unknown", create(`{"name":"n","addons":[],"cpu_millis":"1000","memory_gbs":"4","environment_tag":"STAGING"}`), "environment_tag: must be PROD or DEV"},
		{"fork strategy unknown", route{method: "POST", path: svc + "/forkService", bad: `{"fork_strategy":"LATER"}`}, "fork_strategy: must be one of"},
		{"fork target_time without PITR", route{method: "POST", path: svc + "/forkService", bad: `{"fork_strategy":"NOW","target_time":"2026-01-01T00:00:00Z"}`}, "target_time: is only taken"},
		{"fork target_time malformed", route{method: "POST", path: svc + "/forkService", bad: `{"fork_strategy":"PITR","target_time":"yesterday"}`}, "target_time: must be an RFC 3339"},
		{"setHA without counts", route{method: "POST", path: svc + "/setHA", bad: `{}`}, "replica_count or sync_replica_count is required"},
		{"setHA sync negative", route{method: "POST", path: svc + "/setHA", bad: `{"sync_replica_count":-1}`}, "sync_replica_count: must be >= 0"},
		{"resize shared", route{method: "POST", path: svc + "/resize", bad: `{"cpu_millis":"shared","memory_gbs":"shared"}`}, "cpu_millis: must be an integer >= 1 or a string of digits;"},
		{"resize replica set: size not digits", route{method: "POST", path: rsPath + "/resize", bad: `{"cpu_millis":"1 core","memory_gbs":"4"}`}, "cpu_millis: must be an integer >= 1 or a string of digits"},
		{"resize replica set: memory missing", route{method: "POST", path: rsPath + "/resize", bad: `{"cpu_millis":"1000"}`}, "memory_gbs: is required"},
		{"resize replica set: nodes zero", route{method: "POST", path: rsPath + "/resize", bad: `{"cpu_millis":"1000","memory_gbs":"4","nodes":0}`}, "nodes: must be >= 1"},
		{"resize replica set: nodes a string", route{method: "POST", path: rsPath + "/resize", bad: `{"cpu_millis":"1000","memory_gbs":"4","nodes":"2"}`}, "nodes: must be an integer"},
		{"create replica set: sizes stay integers", route{method: "POST", path: svc + "/replicaSets", bad: `{"name":"r","cpu_millis":"1000","memory_gbs":4,"nodes":1}`}, "cpu_millis: must be an integer"},
		{"region blank", create(`{"name":"n","addons":[],"region_code":"","cpu_millis":1,"memory_gbs":1}`), "region_code: must not be blank"},
		{"unknown field", create(`{"name":"n","addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1,"service_type":"POSTGRES"}`), "service_type: unknown field"},
		{"trailing data", create(`{"name":"n","addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}x`), "body: unexpected data"},
		{"not an object", create(`"hello"`), "body: must be a JSON object"},
		{"empty", create(``), "body: a JSON object is required"},
		{"malformed", create(`{"name":`), "body:"},
		{"too large", create(`{"name":"` + strings.Repeat("a", maxBodyBytes) + `"}`), "body: larger than"},
		{"cidr ipv6", route{method: "POST", path: p + "/vpcs", bad: `{"name":"v","cidr":"fd00::/8","region_code":"r"}`}, "cidr: must be an IPv4"},
		{"cidr garbage", route{method: "POST", path: p + "/vpcs", bad: `{"name":"v","cidr":"10.0.0.0","region_code":"r"}`}, "cidr: must be an IPv4"},
		{"environment lower case", route{method: "POST", path: svc + "/setEnvironment", bad: `{"environment":"dev"}`}, "environment: must be PROD or DEV"},
		{"two problems named", route{method: "POST", path: svc + "/resize", bad: `{}`}, "cpu_millis: is required; memory_gbs: is required"},
		{"slash in path id", route{method: "POST", path: p + "/services/a%2Fb/resize", bad: `{"cpu_millis":1,"memory_gbs":1}`}, "service_id: must not contain a slash"},
		{"misspelt dry_run", route{method: "POST", path: svc + "/resize?dryrun=true", bad: `{"cpu_millis":1,"memory_gbs":1}`}, "dryrun: unknown query parameter"},
		{"bad dry_run value", route{method: "POST", path: svc + "/resize?dry_run=yes", bad: `{"cpu_millis":1,"memory_gbs":1}`}, "dry_run: must be"},
		{"confirm where none is taken", route{method: "POST", path: svc + "/resize?confirm=x", bad: `{"cpu_millis":1,"memory_gbs":1}`}, "confirm: unknown query parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.do(tc.r.method, tc.r.path, tc.r.bad)
			if a.status != http.StatusBadRequest || a.json(t)["code"] != codeInvalidRequest || !strings.Contains(a.json(t)["message"].(string), tc.field) {
				t.Errorf("%d %s, want 400 with %q", a.status, a.body, tc.field)
			}
			if sent := e.sent(); len(sent) != 0 {
				t.Errorf("sent upstream: %v", sent)
			}
		})
	}
	// A password is never quoted, even when its type is wrong.
	a := e.do("POST", svc+"/updatePassword", `{"password":["hunter2-secret"]}`)
	if a.status != http.StatusBadRequest || strings.Contains(a.body, "hunter2") {
		t.Errorf("updatePassword with a wrong type: %d %s", a.status, a.body)
	}
	// Idempotency-Key: only on creates, and bounded.
	a = e.do("POST", svc+"/resize", `{"cpu_millis":1,"memory_gbs":1}`, idempotencyHeader, "k1")
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, idempotencyHeader) {
		t.Errorf("Idempotency-Key on resize: %d %s", a.status, a.body)
	}
	a = e.do("POST", p+"/vpcs", `{"name":"v","cidr":"10.40.0.0/16","region_code":"r"}`, idempotencyHeader, strings.Repeat("k", 256))
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, idempotencyHeader) {
		t.Errorf("256-character Idempotency-Key: %d %s", a.status, a.body)
	}
	if sent := e.sent(); len(sent) != 0 {
		t.Errorf("sent upstream: %v", sent)
	}
}

func TestAuthentication(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	tokenEnv := newEnv(t)
	basicEnv := newEnv(t, withOptions(func(o *Options) {
		o.Token, o.BasicAuthUsers = "", map[string]string{"alice": string(hash)}
	}))
	d := tokenEnv.demo()
	path := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"] + "/resize"
	body := `{"cpu_millis":1000,"memory_gbs":4}`
	for _, tc := range []struct {
		name string
		e    *env
		auth string
		want int
	}{
		{"no credentials", tokenEnv, "", 401},
		{"wrong token", tokenEnv, "Bearer not-the-token", 401},
		{"token as basic", tokenEnv, "Basic " + "YWxpY2U6cmlnaHQtcGFzc3dvcmQ=", 401},
		{"right token", tokenEnv, "Bearer " + testToken, 202},
		{"basic: no credentials", basicEnv, "", 401},
		{"basic: wrong password", basicEnv, "Basic YWxpY2U6d3Jvbmc=", 401},             // alice:wrong
		{"basic: unknown user", basicEnv, "Basic Ym9iOnJpZ2h0LXBhc3N3b3Jk", 401},       // bob:right-password
		{"basic: a token", basicEnv, "Bearer " + testToken, 401},                       //
		{"basic: right password", basicEnv, "Basic YWxpY2U6cmlnaHQtcGFzc3dvcmQ=", 202}, // alice:right-password
		{"basic: right password, cached", basicEnv, "Basic YWxpY2U6cmlnaHQtcGFzc3dvcmQ=", 202},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.e.do("POST", path, body, "Authorization", tc.auth)
			want := tc.want
			if a.status != want {
				t.Fatalf("%d %s, want %d", a.status, a.body, want)
			}
			if want == 401 {
				if a.json(t)["code"] != codeUnauthorized || a.header.Get("WWW-Authenticate") == "" {
					t.Errorf("401 without code or challenge: %v %s", a.header, a.body)
				}
				if sent := tc.e.sent(); len(sent) != 0 {
					t.Errorf("sent upstream: %v", sent)
				}
			}
		})
	}
	if !strings.Contains(basicEnv.audit.String(), `"caller":"alice"`) {
		t.Errorf("audit does not name the basic-auth user:\n%s", basicEnv.audit.String())
	}
	if !strings.Contains(tokenEnv.audit.String(), `"caller":"token"`) {
		t.Errorf("audit does not name the token caller:\n%s", tokenEnv.audit.String())
	}
	// Unauthenticated requests to unknown routes are 401 too: routes are
	// not revealed.
	if a := tokenEnv.do("GET", "/nothing", "", "Authorization", ""); a.status != 401 {
		t.Errorf("unknown route without credentials: %d", a.status)
	}
}

func TestNewRefusesContradictions(t *testing.T) {
	projects := func(string) (Project, bool) { return Project{}, false }
	for name, opts := range map[string]Options{
		"no auth":        {Projects: projects},
		"token and user": {Projects: projects, Token: "t", BasicAuthUsers: map[string]string{"a": "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"}},
		"bad hash":       {Projects: projects, BasicAuthUsers: map[string]string{"a": "plain"}},
		"read op":        {Projects: projects, Token: "t", Allow: []string{apiclient.OpGetService}},
		"unknown op":     {Projects: projects, Token: "t", Allow: []string{"dropDatabase"}},
	} {
		if _, err := New(context.Background(), opts); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestAllowListAndProjects(t *testing.T) {
	e := newEnv(t, withOptions(func(o *Options) { o.Allow = nil }))
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	for _, r := range []struct{ method, path, body string }{
		{"DELETE", p + "/services/" + d.service["dev-sandbox"], ""},
		{"POST", p + "/services/" + d.service["dev-sandbox"] + "/updatePassword", `{"password":"x"}`},
		{"DELETE", p + "/vpcs/" + d.vpc["prod-vpc"], ""},
	} {
		a := e.do(r.method, r.path, r.body)
		if a.status != http.StatusForbidden || a.json(t)["code"] != codeOperationNotAllowed {
			t.Errorf("%s %s by default: %d %s", r.method, r.path, a.status, a.body)
		}
	}
	// The allow list is checked before the body.
	if a := e.do("POST", p+"/services/x/updatePassword", `garbage`); a.status != http.StatusForbidden {
		t.Errorf("disallowed with a bad body: %d %s", a.status, a.body)
	}
	a := e.do("POST", "/api/v1/projects/other-project/services/"+d.service["dev-sandbox"]+"/resize", `{"cpu_millis":1000,"memory_gbs":4}`)
	if a.status != http.StatusForbidden || a.json(t)["code"] != codeProjectNotConfigured {
		t.Errorf("unknown project: %d %s", a.status, a.body)
	}
	if sent := e.sent(); len(sent) != 0 {
		t.Errorf("sent upstream: %v", sent)
	}
	// The allow list is exported from the start, one series per operation.
	var exported []string
	fams, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "clouddb_exporter_admin_allowed_operation_info" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetGauge().GetValue() != 1 || len(m.GetLabel()) != 1 {
				t.Errorf("allowed operation series %v", m)
			}
			exported = append(exported, m.GetLabel()[0].GetValue())
		}
	}
	if want := DefaultAllow(); !slices.Equal(exported, slices.Sorted(slices.Values(want))) {
		t.Errorf("clouddb_exporter_admin_allowed_operation_info operations %v, want the default allow list %v", exported, want)
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/v1/nothing", 404},
		{"GET", p + "/services", 405},
		{"PUT", p + "/services/x/resize", 405},
		{"POST", "/api/v1/projects/" + testProject + "/services/x/../y/resize", 404},
		{"POST", "/api/v1/projects/" + testProject + "/services/%2E%2E/resize", 404},
	} {
		a := e.do(tc.method, tc.path, "")
		if a.status != tc.want || a.json(t)["code"] == "" {
			t.Errorf("%s %s: %d %s, want %d with a code", tc.method, tc.path, a.status, a.body, tc.want)
		}
	}
}

func TestProdDeleteGuard(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	orders := d.service["orders-db"]
	a := e.do("DELETE", p+"/services/"+orders, "")
	if a.status != http.StatusPreconditionRequired || a.json(t)["code"] != codeConfirmationRequired || !strings.Contains(a.body, "?confirm="+orders) {
		t.Fatalf("PROD delete without confirm: %d %s", a.status, a.body)
	}
	if sent := e.sent(); sent[apiclient.OpGetService] != 1 || sent[apiclient.OpDeleteService] != 0 {
		t.Errorf("want one fresh getService and no delete, sent %v", sent)
	}
	if a := e.do("DELETE", p+"/services/"+orders+"?confirm=wrong", ""); a.status != http.StatusBadRequest {
		t.Errorf("wrong confirm: %d %s", a.status, a.body)
	}
	if sent := e.sent(); len(sent) != 0 {
		t.Errorf("a wrong confirm sent %v", sent)
	}
	if a := e.do("DELETE", p+"/services/"+orders+"?confirm="+orders, ""); a.status != http.StatusAccepted {
		t.Errorf("confirmed PROD delete: %d %s", a.status, a.body)
	}
	if sent := e.sent(); sent[apiclient.OpDeleteService] != 1 {
		t.Errorf("confirmed delete sent %v", sent)
	}

	rs := d.rs["metrics-read"]
	rsPath := p + "/services/" + rs[0] + "/replicaSets/" + rs[1]
	if a := e.do("DELETE", rsPath, ""); a.status != http.StatusPreconditionRequired {
		t.Errorf("PROD replica set delete without confirm: %d %s", a.status, a.body)
	}
	if sent := e.sent(); sent[apiclient.OpListReplicaSets] != 1 || sent[apiclient.OpDeleteReplicaSet] != 0 {
		t.Errorf("want one fresh listReplicaSets and no delete, sent %v", sent)
	}
	// A DEV resource needs no confirmation.
	if a := e.do("POST", rsPath+"/setEnvironment?confirm="+rs[1], `{"environment":"DEV"}`); a.status != http.StatusOK {
		t.Fatalf("setEnvironment: %d %s", a.status, a.body)
	}
	if a := e.do("DELETE", rsPath, ""); a.status != http.StatusAccepted {
		t.Errorf("DEV replica set delete: %d %s", a.status, a.body)
	}
	// A service that does not exist: the read's 404 passes through.
	if a := e.do("DELETE", p+"/services/nosuchsvc", ""); a.status != http.StatusNotFound {
		t.Errorf("delete of a missing service: %d %s", a.status, a.body)
	}
}

func TestDryRun(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	svc := d.service["embeddings"]
	a := e.do("POST", p+"/services/"+svc+"/resize?dry_run=true", `{"memory_gbs":8, "cpu_millis":2000}`)
	m := a.json(t)
	body, _ := m["body"].(map[string]any)
	if a.status != 200 || m["dry_run"] != true || m["operation"] != apiclient.OpResizeService || m["method"] != "POST" ||
		m["path"] != "/projects/"+testProject+"/services/"+svc+"/resize" || body["cpu_millis"] != "2000" {
		t.Errorf("dry run: %d %s", a.status, a.body)
	}
	a = e.do("POST", p+"/services/"+svc+"/updatePassword?dry_run=1", `{"password":"dry-run-secret"}`)
	if a.status != 200 || strings.Contains(a.body, "dry-run-secret") || !strings.Contains(a.body, redactedValue) {
		t.Errorf("dry run of updatePassword: %d %s", a.status, a.body)
	}
	a = e.do("DELETE", p+"/services/"+d.service["orders-db"]+"?dry_run=true", "")
	if a.status != 200 || !strings.Contains(a.body, "checked at execution time") {
		t.Errorf("dry run of a delete: %d %s", a.status, a.body)
	}
	a = e.do("POST", p+"/services?dry_run=true", `{"name":"n","addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}`, idempotencyHeader, "dry")
	if a.status != 200 || a.json(t)["body"].(map[string]any)["addons"] == nil {
		t.Errorf("dry run of a create: %d %s", a.status, a.body)
	}
	if sent := e.sent(); len(sent) != 0 {
		t.Errorf("a dry run sent %v", sent)
	}
	if !strings.Contains(e.audit.String(), `"dry_run":true`) {
		t.Error("dry runs are not audited as such")
	}
}

func TestIdempotency(t *testing.T) {
	e := newEnv(t)
	path := "/api/v1/projects/" + testProject + "/services"
	body := `{"name":"idem","addons":[],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`
	first := e.do("POST", path, body, idempotencyHeader, "key-1")
	if first.status != http.StatusAccepted || first.header.Get("Cache-Control") != "no-store" || first.json(t)["initial_password"] == "" {
		t.Fatalf("first create: %d %v %s", first.status, first.header, first.body)
	}
	// Same body, other spacing and key order: a replay.
	again := e.do("POST", path, `{"memory_gbs":4, "cpu_millis":1000, "region_code":"us-east-1", "addons":[], "name":"idem"}`, idempotencyHeader, "key-1")
	if again.status != first.status || again.body != first.body || again.header.Get(replayedHeader) != "true" || again.header.Get("Cache-Control") != "no-store" {
		t.Errorf("replay: %d %v %s", again.status, again.header, again.body)
	}
	if n := e.sent()[apiclient.OpCreateService]; n != 1 {
		t.Errorf("createService sent %d times, want 1", n)
	}
	reused := e.do("POST", path, strings.Replace(body, `"idem"`, `"other"`, 1), idempotencyHeader, "key-1")
	if reused.status != http.StatusConflict || reused.json(t)["code"] != codeIdempotencyKeyReused {
		t.Errorf("reused key: %d %s", reused.status, reused.body)
	}
	// Keys are scoped by operation: the same key on createVPC is new.
	vpc := e.do("POST", "/api/v1/projects/"+testProject+"/vpcs", `{"name":"v","cidr":"10.50.0.0/16","region_code":"r"}`, idempotencyHeader, "key-1")
	if vpc.status != http.StatusCreated {
		t.Errorf("same key on another operation: %d %s", vpc.status, vpc.body)
	}
	// After a 5xx the create may have happened: the failure is replayed and
	// nothing is sent again, so a blind retry cannot make a twin.
	e.sim.AddFault(cloudsim.Fault{Operation: apiclient.OpCreateService, Status: 500, Count: 1})
	if a := e.do("POST", path, body, idempotencyHeader, "key-2"); a.status != 500 {
		t.Errorf("create with a fault: %d %s", a.status, a.body)
	}
	creates := e.sim.RequestCount(apiclient.OpCreateService)
	if a := e.do("POST", path, body, idempotencyHeader, "key-2"); a.status != 500 || a.header.Get(replayedHeader) != "true" {
		t.Errorf("retry after a 5xx: %d %v %s, want the failure replayed", a.status, a.header, a.body)
	}
	if n := e.sim.RequestCount(apiclient.OpCreateService); n != creates {
		t.Errorf("a retry after a 5xx reached the API (%d creates, want %d)", n, creates)
	}
	// A 4xx was refused before anything happened: the key is free again.
	e.sim.AddFault(cloudsim.Fault{Operation: apiclient.OpCreateService, Status: 409, Count: 1})
	if a := e.do("POST", path, body, idempotencyHeader, "key-4"); a.status != 409 {
		t.Errorf("create with a 409 fault: %d %s", a.status, a.body)
	}
	if a := e.do("POST", path, body, idempotencyHeader, "key-4"); a.status != 202 || a.header.Get(replayedHeader) != "" {
		t.Errorf("retry after a 4xx: %d %v %s", a.status, a.header, a.body)
	}

	// In flight: hold the upstream with a latency fault.
	e.sim.AddFault(cloudsim.Fault{Operation: apiclient.OpCreateService, Latency: 2 * time.Second, Count: 1})
	done := make(chan answer)
	go func() { done <- e.do("POST", path, body, idempotencyHeader, "key-3") }()
	testbin.WaitFor(t, 20*time.Second, "the first request to hold its key", func() bool {
		e.srv.idem.mu.Lock()
		defer e.srv.idem.mu.Unlock()
		entry, ok := e.srv.idem.entries[idemKey{callerToken, testProject, apiclient.OpCreateService, "key-3"}]
		return ok && !entry.done
	})
	if a := e.do("POST", path, body, idempotencyHeader, "key-3"); a.status != http.StatusConflict || a.json(t)["code"] != codeIdempotencyInProgress {
		t.Errorf("key in flight: %d %s", a.status, a.body)
	}
	if a := <-done; a.status != http.StatusAccepted {
		t.Errorf("held request: %d %s", a.status, a.body)
	}
}

func TestIdempotencyStoreBounds(t *testing.T) {
	now := time.Unix(0, 0)
	s := newIdempotencyStore(func() time.Time { return now }, 2)
	fp := [32]byte{1}
	for _, k := range []string{"a", "b", "c"} {
		if out, _ := s.begin(idemKey{"c", "p", "op", k}, fp); out != idemNew {
			t.Fatalf("%s: %d", k, out)
		}
		s.complete(idemKey{"c", "p", "op", k}, storedAnswer{status: 201})
	}
	if out, _ := s.begin(idemKey{"c", "p", "op", "a"}, [32]byte{2}); out != idemNew {
		t.Errorf("the oldest key was not evicted: %d", out)
	}
	if out, a := s.begin(idemKey{"c", "p", "op", "c"}, fp); out != idemReplay || a.status != 201 {
		t.Errorf("a kept key: %d", out)
	}
	now = now.Add(idempotencyTTL)
	if out, _ := s.begin(idemKey{"c", "p", "op", "c"}, [32]byte{3}); out != idemNew {
		t.Errorf("a key older than 24h: %d", out)
	}
}

// TestUpstreamErrors: each upstream error reaches the caller as its own
// status and code. Only the timeout case has a short request bound (its
// own server): with 300 ms for every case, a loaded machine answered a
// plain 404 or 500 with 504.
func TestUpstreamErrors(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	resize := p + "/services/" + d.service["embeddings"] + "/resize"
	body := `{"cpu_millis":1000,"memory_gbs":4}`
	for _, tc := range []struct {
		name  string
		fault *cloudsim.Fault
		path  string
		want  int
		code  string
	}{
		{"404", nil, p + "/services/nosuchsvc/resize", 404, "NOT_FOUND"},
		{"409", nil, p + "/services/" + d.service["legacy-reports"] + "/resize", 409, "CONFLICT"},
		{"500", &cloudsim.Fault{Operation: apiclient.OpResizeService, Status: 500, Count: 1}, resize, 500, "INTERNAL_ERROR"},
		{"503", &cloudsim.Fault{Operation: apiclient.OpResizeService, Status: 503, Code: "MAINTENANCE", Message: "back soon", Count: 1}, resize, 503, "MAINTENANCE"},
		{"401 upstream", &cloudsim.Fault{Operation: apiclient.OpResizeService, Status: 401, Count: 1}, resize, 502, codeUpstreamUnauthorized},
		{"dropped", &cloudsim.Fault{Operation: apiclient.OpResizeService, DropConnection: true, Count: 1}, resize, 502, codeUpstreamUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fault != nil {
				e.sim.AddFault(*tc.fault)
			}
			a := e.do("POST", tc.path, body)
			if a.status != tc.want || a.json(t)["code"] != tc.code {
				t.Errorf("%d %s, want %d %s", a.status, a.body, tc.want, tc.code)
			}
		})
	}
	ops := e.do("GET", "/api/v1/operations", "")
	if !strings.Contains(ops.body, `"state":"failed"`) || !strings.Contains(ops.body, `"http_status":503`) {
		t.Errorf("failed operations not listed: %s", ops.body)
	}
}

// TestUpstreamTimeout: an upstream call that outlasts the request bound
// is answered 504 and listed as a failed operation. The bound (300 ms) is
// far below the upstream's latency (3 s), so a loaded machine only makes
// the 504 come later.
func TestUpstreamTimeout(t *testing.T) {
	e := newEnv(t, withOptions(func(o *Options) { o.RequestTimeout = 300 * time.Millisecond }))
	d := e.demo()
	resize := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"] + "/resize"
	e.sim.AddFault(cloudsim.Fault{Operation: apiclient.OpResizeService, Latency: 3 * time.Second, Count: 1})
	a := e.do("POST", resize, `{"cpu_millis":1000,"memory_gbs":4}`)
	if a.status != http.StatusGatewayTimeout || a.json(t)["code"] != codeUpstreamTimeout {
		t.Errorf("%d %s, want 504 %s", a.status, a.body, codeUpstreamTimeout)
	}
	ops := e.do("GET", "/api/v1/operations", "")
	if !strings.Contains(ops.body, `"state":"failed"`) || !strings.Contains(ops.body, `"http_status":504`) {
		t.Errorf("the timed-out operation is not listed as failed: %s", ops.body)
	}
}

// TestUpstreamErrorDetails: the details of a revision 2026 error reach the
// caller as the API sent them, beside its code and message.
func TestUpstreamErrorDetails(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	path := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"] + "/forkService"
	a := e.do("POST", path, `{"fork_strategy":"PITR","target_time":"2000-01-01T00:00:00Z","name":"too-early"}`)
	if a.status != http.StatusBadRequest {
		t.Fatalf("fork before the service existed: %d %s, want the API's 400", a.status, a.body)
	}
	got := a.json(t)
	details, _ := got["details"].(map[string]any)
	if got["code"] != "INVALID_REQUEST" || details["field"] != "target_time" {
		t.Errorf("answer %s: want the API's code and its details {\"field\":\"target_time\"}", a.body)
	}
}

func TestOperationTracking(t *testing.T) {
	e := newEnv(t, withTimings(cloudsim.Timings{Configure: time.Minute, Provision: time.Minute, Delete: time.Minute, ReplicaSet: time.Minute}))
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	svc := d.service["embeddings"]
	a := e.do("POST", p+"/services/"+svc+"/resize", `{"cpu_millis":4000,"memory_gbs":16}`)
	if a.status != http.StatusAccepted {
		t.Fatalf("resize: %d %s", a.status, a.body)
	}
	id := a.header.Get("X-Request-Id")
	if a.header.Get("Location") != "/api/v1/operations/"+id {
		t.Errorf("Location %q", a.header.Get("Location"))
	}
	state := func(want, status string) func() bool {
		return func() bool {
			op := e.do("GET", "/api/v1/operations/"+id, "").json(t)
			return op["state"] == want && (status == "" || op["last_status"] == status)
		}
	}
	testbin.WaitFor(t, 20*time.Second, "the resize to be seen CONFIGURING", state(statePending, apiclient.ServiceConfiguring))
	// The poller's snapshot has the new size at once (refresh on write).
	snap := e.poller.Snapshot()
	for _, s := range snap.Services {
		if s.ServiceID == svc && (s.Resources[0].Spec.CPUMillis == nil || *s.Resources[0].Spec.CPUMillis != 4000) {
			t.Errorf("the snapshot was not refreshed: %+v", s.Resources)
		}
	}
	e.clock.Advance(2 * time.Minute)
	testbin.WaitFor(t, 20*time.Second, "the resize to succeed", state(stateSucceeded, apiclient.ServiceReady))
	op := e.do("GET", "/api/v1/operations/"+id, "").json(t)
	if op["accepted_at"] == nil || op["settled_at"] == nil || op["duration_seconds"] == nil {
		t.Errorf("timings missing: %v", op)
	}
	if n := testutil.CollectAndCount(e.srv.metrics.duration, "clouddb_exporter_admin_operation_duration_seconds"); n != 1 {
		t.Errorf("%d duration series, want 1", n)
	}

	// A delete settles when the service is gone.
	a = e.do("DELETE", p+"/services/"+d.service["dev-sandbox"], "")
	delID := a.header.Get("X-Request-Id")
	testbin.WaitFor(t, 20*time.Second, "the delete to be seen DELETING", func() bool {
		return e.do("GET", "/api/v1/operations/"+delID, "").json(t)["last_status"] == apiclient.ServiceDeleting
	})
	e.clock.Advance(2 * time.Minute)
	testbin.WaitFor(t, 20*time.Second, "the delete to succeed", func() bool {
		op := e.do("GET", "/api/v1/operations/"+delID, "").json(t)
		return op["state"] == stateSucceeded && op["last_status"] == lastStatusGone
	})

	// Listing: newest first.
	var list struct{ Operations []Operation }
	if err := jsonUnmarshal(e.do("GET", "/api/v1/operations", "").body, &list); err != nil || len(list.Operations) != 2 || list.Operations[0].ID != delID {
		t.Errorf("operations list: %v %+v", err, list)
	}
	if a := e.do("GET", "/api/v1/operations/nope", ""); a.status != http.StatusNotFound {
		t.Errorf("unknown operation: %d", a.status)
	}
}

func TestOperationTimeout(t *testing.T) {
	e := newEnv(t, withTimings(cloudsim.Timings{ReplicaSet: time.Hour}), withOptions(func(o *Options) { o.OperationTimeout = 200 * time.Millisecond }))
	d := e.demo()
	rs := d.rs["orders-read"]
	a := e.do("POST", "/api/v1/projects/"+testProject+"/services/"+rs[0]+"/replicaSets/"+rs[1]+"/resize", `{"cpu_millis":1000,"memory_gbs":4,"nodes":3}`)
	if a.status != http.StatusAccepted {
		t.Fatalf("resize: %d %s", a.status, a.body)
	}
	id := a.header.Get("X-Request-Id")
	testbin.WaitFor(t, 20*time.Second, "the operation to time out", func() bool {
		op := e.do("GET", "/api/v1/operations/"+id, "").json(t)
		return op["state"] == stateTimedOut && op["last_status"] == apiclient.ReplicaSetResizing
	})
	if v := testutil.ToFloat64(e.srv.metrics.requests.WithLabelValues(apiclient.OpResizeReplicaSet, "202")); v != 1 {
		t.Errorf("requests counter %v", v)
	}
}

func TestAuditHasNoSecrets(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	create := e.do("POST", p+"/services", `{"name":"audited","addons":["ai"],"region_code":"r","cpu_millis":1000,"memory_gbs":4}`)
	initial, _ := create.json(t)["initial_password"].(string)
	fork := e.do("POST", p+"/services/"+d.service["search-ai"]+"/forkService", `{"fork_strategy":"LAST_SNAPSHOT","name":"f"}`)
	forked, _ := fork.json(t)["initial_password"].(string)
	if initial == "" || forked == "" || fork.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create/fork: %s %s", create.body, fork.body)
	}
	e.do("POST", p+"/services/"+d.service["embeddings"]+"/updatePassword", `{"password":"new-master-password"}`)
	e.do("POST", p+"/services/"+d.service["embeddings"]+"/updatePassword?dry_run=true", `{"password":"dry-master-password"}`)
	e.do("POST", p+"/services/"+d.service["embeddings"]+"/updatePassword", `{"password":"bad-master-password", "x": 1}`)
	e.do("GET", "/api/v1/operations", "")
	// Six outcomes, and an "accepted" record for each of the three writes
	// sent upstream.
	testbin.WaitFor(t, 20*time.Second, "the audit records", func() bool { return requestRecords(e.audit.String()) == 9 })
	out := e.audit.String() + e.logs.String()
	for _, secret := range []string{initial, forked, "new-master-password", "dry-master-password", "bad-master-password", testToken, testSecretKey, testAccessKey} {
		if strings.Contains(out, secret) {
			t.Errorf("secret %q in the audit or log:\n%s", secret, out)
		}
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// TestTrackingFollowsReload: tracking looks the project up on every tick,
// so an operation whose project a reload removed ends failed at once
// instead of refreshing through a stopped poller until it times out.
func TestTrackingFollowsReload(t *testing.T) {
	e := newEnv(t, withTimings(cloudsim.Timings{Configure: time.Hour}))
	var removed atomic.Bool
	configured := e.srv.opts.Projects
	e.srv.opts.Projects = func(id string) (Project, bool) {
		if removed.Load() {
			return Project{}, false
		}
		return configured(id)
	}
	d := e.demo()
	a := e.do("POST", "/api/v1/projects/"+testProject+"/services/"+d.service["orders-db"]+"/resize", `{"cpu_millis":2000,"memory_gbs":8}`)
	if a.status != http.StatusAccepted {
		t.Fatalf("resize: %d %s", a.status, a.body)
	}
	id := a.header.Get("X-Request-Id")
	testbin.WaitFor(t, 20*time.Second, "the resize to be tracked", func() bool {
		return e.do("GET", "/api/v1/operations/"+id, "").json(t)["last_status"] == apiclient.ServiceConfiguring
	})
	removed.Store(true)
	testbin.WaitFor(t, 20*time.Second, "the operation to fail with its project gone", func() bool {
		op := e.do("GET", "/api/v1/operations/"+id, "").json(t)
		return op["state"] == stateFailed && op["last_status"] == "project no longer configured"
	})
}

// TestProdStopAndRenameGuard: stopping or renaming a PROD service needs the
// same confirmation as deleting it (revision 2026's stop and rename).
func TestProdStopAndRenameGuard(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	one := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"]
	for _, c := range []struct{ op, path, body, verb string }{
		{apiclient.OpStopService, one + "/stop", "", "to stop it"},
		{apiclient.OpRenameService, one + "/rename", `{"name":"emb-2"}`, "to rename it"},
	} {
		a := e.do("POST", c.path, c.body)
		if a.status != http.StatusPreconditionRequired || !strings.Contains(a.body, c.verb) {
			t.Errorf("PROD %s without confirm: %d %s", c.op, a.status, a.body)
		}
		if sent := e.sent(); sent[c.op] != 0 {
			t.Errorf("unconfirmed %s sent %v", c.op, sent)
		}
		e.srv.background.Wait()
		if a := e.do("POST", c.path+"?confirm="+d.service["embeddings"], c.body); a.status/100 != 2 {
			t.Errorf("confirmed %s: %d %s", c.op, a.status, a.body)
		}
		e.srv.background.Wait()
		if sent := e.sent(); sent[c.op] != 1 {
			t.Errorf("confirmed %s sent %v", c.op, sent)
		}
	}
}

// TestAnswersRelayedAsReceived: the upstream answer reaches the caller as
// the API sent it: revision 2026's fields the client does not model are
// kept, none is added (no "paused": false), and renameVPC's {message} is a
// success.
func TestAnswersRelayedAsReceived(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	p := "/api/v1/projects/" + testProject
	a := e.do("POST", p+"/services", `{"name":"relayed","addons":[],"cpu_millis":"shared","memory_gbs":"shared"}`)
	if a.status != http.StatusAccepted || strings.Contains(a.body, `"paused"`) ||
		!strings.Contains(a.body, `"read_replica_sets":[]`) || !strings.Contains(a.body, `"cpu_millis":null`) {
		t.Errorf("create answer not relayed as received: %d %s", a.status, a.body)
	}
	a = e.do("POST", p+"/vpcs/"+d.vpc["analytics-vpc"]+"/rename", `{"name":"renamed-vpc"}`)
	if a.status != http.StatusOK || !strings.Contains(a.body, `"message"`) || strings.Contains(a.body, `"cidr"`) {
		t.Errorf("renameVPC: %d %s, want the API's {message}", a.status, a.body)
	}
	// The client reads no body of a resize, but the API sends the service.
	a = e.do("POST", p+"/services/"+d.service["embeddings"]+"/resize", `{"cpu_millis":"2000","memory_gbs":"8"}`)
	if a.status != http.StatusAccepted || a.header.Get("Content-Type") != "application/json" || a.json(t)["service_id"] != d.service["embeddings"] {
		t.Errorf("resizeService: %d %s, want the API's service", a.status, a.body)
	}
}

// TestResizeReplicaSetBody sends revision 2026's body (resizeService's, no
// nodes) and the first revision's (with nodes): the sizes go upstream as
// digit strings and nodes only when given.
func TestResizeReplicaSetBody(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	rs := d.rs["orders-read"]
	path := "/api/v1/projects/" + testProject + "/services/" + rs[0] + "/replicaSets/" + rs[1] + "/resize"
	nodes := func() int64 {
		list, err := e.client.ListReplicaSets(context.Background(), rs[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			if r.ID == rs[1] {
				return int64(r.Nodes)
			}
		}
		t.Fatalf("replica set %s is gone", rs[1])
		return 0
	}
	before := nodes()
	if a := e.do("POST", path, `{"cpu_millis":"2000","memory_gbs":"8"}`); a.status != http.StatusAccepted || a.json(t)["message"] == nil {
		t.Fatalf("revision 2026 body: %d %s, want 202 with the API's {message}", a.status, a.body)
	}
	e.srv.background.Wait()
	if got := nodes(); got != before {
		t.Errorf("a resize without nodes changed nodes: %d, want %d", got, before)
	}
	if a := e.do("POST", path, `{"cpu_millis":1000,"memory_gbs":"4","nodes":3}`); a.status != http.StatusAccepted {
		t.Fatalf("body with nodes: %d %s", a.status, a.body)
	}
	e.srv.background.Wait()
	if got := nodes(); got != 3 {
		t.Errorf("nodes after a resize with nodes 3: %d", got)
	}
}

// TestIdempotencyKeyScopedByCaller: a second caller repeating the first
// one's key and body got the first one's answer, the new database's
// initial_password included. Keys are now the caller's own: the second
// caller's request is a request of its own.
func TestIdempotencyKeyScopedByCaller(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withOptions(func(o *Options) {
		o.Token, o.BasicAuthUsers = "", map[string]string{"alice": string(hash), "bob": string(hash)}
	}))
	path := "/api/v1/projects/" + testProject + "/services"
	body := `{"name":"idem","addons":[],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`
	basic := func(user string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":pw"))
	}
	first := e.do("POST", path, body, "Authorization", basic("alice"), idempotencyHeader, "shared-key")
	if first.status != http.StatusAccepted {
		t.Fatalf("alice's create: %d %s", first.status, first.body)
	}
	other := e.do("POST", path, body, "Authorization", basic("bob"), idempotencyHeader, "shared-key")
	if other.header.Get(replayedHeader) != "" || other.body == first.body {
		t.Errorf("bob's request with alice's key got alice's answer: %d %v %s", other.status, other.header, other.body)
	}
	if n := e.sent()[apiclient.OpCreateService]; n != 2 {
		t.Errorf("createService sent %d times, want 2 (one per caller)", n)
	}
	again := e.do("POST", path, body, "Authorization", basic("alice"), idempotencyHeader, "shared-key")
	if again.header.Get(replayedHeader) != "true" || again.body != first.body {
		t.Errorf("alice's own retry: %d %v %s, want her answer replayed", again.status, again.header, again.body)
	}
}
