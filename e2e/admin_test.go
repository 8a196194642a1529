package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/clouddb/clouddb_exporter/admin"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// Every timing zero: writes settle at once, so a table of writes on the
// demo fleet does not run into the simulator's state conflicts.
var instantSim = []string{"--timing.provision=0s", "--timing.configure=0s", "--timing.delete=0s", "--timing.replica-set=0s", "--timing.peering=0s"}

// startAdmin starts the simulator with simArgs and, in front of it, the
// exporter with the admin surface (testbin.StartWithAdmin), debug logs and
// fast tracking, plus args; the simulator's request counts start at zero.
func startAdmin(t *testing.T, simArgs []string, args ...string) *testbin.Exporter {
	t.Helper()
	sim := testbin.StartSim(t, simArgs...)
	e := testbin.StartWithAdmin(t, sim, append([]string{"--log.level=debug", "--collect.transition-interval=300ms"}, args...)...)
	e.Sim.ResetRequests(t)
	return e
}

// fleetIDs are the demo's ids by name, read from /metrics.
type fleetIDs struct {
	service, vpc map[string]string
	rs           map[string][2]string
	peerings     map[string][]string // by VPC id
}

func demoIDs(t *testing.T, e *testbin.Exporter) fleetIDs {
	t.Helper()
	fams := e.Scrape(t)
	f := fleetIDs{service: map[string]string{}, vpc: map[string]string{}, rs: map[string][2]string{}, peerings: map[string][]string{}}
	labels := func(name string, each func(map[string]string)) {
		for _, m := range fams[name].GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			each(l)
		}
	}
	labels("clouddb_service_info", func(l map[string]string) { f.service[l["name"]] = l["service_id"] })
	labels("clouddb_replica_set_info", func(l map[string]string) { f.rs[l["name"]] = [2]string{l["service_id"], l["replica_set_id"]} })
	labels("clouddb_vpc_info", func(l map[string]string) { f.vpc[l["name"]] = l["vpc_id"] })
	labels("clouddb_vpc_peering_info", func(l map[string]string) {
		f.peerings[l["vpc_id"]] = append(f.peerings[l["vpc_id"]], l["peering_id"])
	})
	return f
}

func TestAdminEveryWriteOperation(t *testing.T) {
	t.Parallel()
	var allowAll []string
	for _, op := range admin.WriteOperations() {
		allowAll = append(allowAll, "--admin.allow="+op)
	}
	// Full cycles every 2s: the creates show on /metrics with the next list.
	r := startAdmin(t, instantSim, append(allowAll, "--collect.interval=2s", "--api.rate-limit=100")...)
	f := demoIDs(t, r)
	p := "/api/v1/projects/demo-project"
	emb, search, dev := f.service["embeddings"], f.service["search-ai"], f.service["dev-sandbox"]
	rs := f.rs["orders-read"]
	rsPath := p + "/services/" + rs[0] + "/replicaSets/" + rs[1]
	analytics, prodVPC := f.vpc["analytics-vpc"], f.vpc["prod-vpc"]
	if emb == "" || search == "" || dev == "" || rs[1] == "" || analytics == "" || len(f.peerings[prodVPC]) == 0 {
		t.Fatalf("demo ids missing: %+v", f)
	}
	for _, tc := range []struct {
		op, method, path, good, bad, badField string
		want                                  int
		// seen is a /metrics condition the write must reach, if observable.
		seen func() bool
	}{
		{"createService", "POST", p + "/services", `{"name":"e2e-new","addons":["time-series"],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`,
			`{"name":"e2e-new","addons":["time-series"],"region_code":"us-east-1","cpu_millis":"1k","memory_gbs":4}`, "cpu_millis", 202,
			r.MetricIs("clouddb_service_info", 1, "name", "e2e-new")},
		{"resizeService", "POST", p + "/services/" + emb + "/resize", `{"cpu_millis":3000,"memory_gbs":12}`, `{"cpu_millis":3000}`, "memory_gbs", 202,
			r.MetricIs("clouddb_service_cpu_cores", 3, "service_id", emb)},
		{"updatePassword", "POST", p + "/services/" + emb + "/updatePassword", `{"password":"e2e-new-password"}`, `{"password":""}`, "password", 204, nil},
		{"setServiceEnvironment", "POST", p + "/services/" + emb + "/setEnvironment?confirm=" + emb, `{"environment":"DEV"}`, `{"environment":"STAGING"}`, "environment", 200,
			r.MetricIs("clouddb_service_info", 1, "service_id", emb, "environment", "DEV")},
		{"setHA", "POST", p + "/services/" + emb + "/setHA", `{"replica_count":2}`, `{"replica_count":-1}`, "replica_count", 202,
			r.MetricIs("clouddb_service_resources", 3, "service_id", emb)},
		{"enableServicePooler", "POST", p + "/services/" + emb + "/enablePooler", ``, `{"now":true}`, "now", 200,
			r.MetricIs("clouddb_service_connection_pooler_enabled", 1, "service_id", emb)},
		{"disableServicePooler", "POST", p + "/services/" + emb + "/disablePooler", `{}`, `[]`, "body", 200,
			r.MetricIs("clouddb_service_connection_pooler_enabled", 0, "service_id", emb)},
		{"forkService", "POST", p + "/services/" + search + "/forkService", `{"fork_strategy":"NOW","name":"e2e-fork","cpu_millis":1000,"memory_gbs":4}`,
			`{"fork_strategy":"NOW","name":"e2e-fork","cpu_millis":1000,"memory_gbs":4,"extra":1}`, "extra", 202,
			r.MetricIs("clouddb_service_info", 1, "name", "e2e-fork")},
		{"attachToVPC", "POST", p + "/services/" + dev + "/attachToVPC", `{"vpc_id":"` + analytics + `"}`, `{"vpc_id":""}`, "vpc_id", 202, nil},
		{"detachFromVPC", "POST", p + "/services/" + dev + "/detachFromVPC", `{"vpc_id":"` + analytics + `"}`, `{"vpc_id":null}`, "vpc_id", 202, nil},
		{"createReplicaSet", "POST", p + "/services/" + emb + "/replicaSets", `{"name":"e2e-read","cpu_millis":1000,"memory_gbs":4,"nodes":1}`,
			`{"name":"e2e-read","cpu_millis":1000,"memory_gbs":4,"nodes":0}`, "nodes", 202,
			r.MetricIs("clouddb_replica_set_info", 1, "name", "e2e-read")},
		{"resizeReplicaSet", "POST", rsPath + "/resize", `{"cpu_millis":"1000","memory_gbs":"4","nodes":3}`, `{"cpu_millis":1000,"memory_gbs":4,"nodes":1.5}`, "nodes", 202,
			r.MetricIs("clouddb_replica_set_nodes", 3, "replica_set_id", rs[1])},
		{"enableReplicaSetPooler", "POST", rsPath + "/enablePooler", ``, `{`, "body", 200,
			r.MetricIs("clouddb_replica_set_connection_pooler_enabled", 1, "replica_set_id", rs[1])},
		{"disableReplicaSetPooler", "POST", rsPath + "/disablePooler", ``, `{}{}`, "body", 200,
			r.MetricIs("clouddb_replica_set_connection_pooler_enabled", 0, "replica_set_id", rs[1])},
		{"setReplicaSetEnvironment", "POST", rsPath + "/setEnvironment", `{"environment":"DEV"}`, `{"environment":1}`, "environment", 200,
			r.MetricIs("clouddb_replica_set_info", 1, "replica_set_id", rs[1], "environment", "DEV")},
		{"deleteReplicaSet", "DELETE", rsPath, ``, `{"x":1}`, "x", 202, nil},
		{"createVPC", "POST", p + "/vpcs", `{"name":"e2e-vpc","cidr":"10.60.0.0/16","region_code":"us-east-1"}`,
			`{"name":"e2e-vpc","cidr":"10.60.0.0/40","region_code":"us-east-1"}`, "cidr", 201,
			r.MetricIs("clouddb_vpc_info", 1, "name", "e2e-vpc")},
		{"renameVPC", "POST", p + "/vpcs/" + analytics + "/rename", `{"name":"e2e-renamed"}`, `{"name":" "}`, "name", 200,
			r.MetricIs("clouddb_vpc_info", 1, "vpc_id", analytics, "name", "e2e-renamed")},
		{"createPeering", "POST", p + "/vpcs/" + analytics + "/peerings", `{"peer_account_id":"999988887777","peer_region_code":"eu-west-1","peer_vpc_id":"vpc-e2e"}`,
			`{"peer_account_id":"999988887777","peer_region_code":"eu-west-1"}`, "peer_vpc_id", 201, nil},
		{"deletePeering", "DELETE", p + "/vpcs/" + prodVPC + "/peerings/" + f.peerings[prodVPC][0], ``, `null`, "body", 204, nil},
		{"deleteService", "DELETE", p + "/services/" + dev, ``, `{"confirm":true}`, "confirm", 202, nil},
		// The analytics VPC has peerings: the API's 409 passes through.
		{"deleteVPC", "DELETE", p + "/vpcs/" + analytics, ``, `{"force":true}`, "force", 409, nil},
	} {
		t.Run(tc.op, func(t *testing.T) {
			r.Sim.ResetRequests(t)
			code, _, body := r.Admin(t, tc.method, tc.path, tc.bad)
			if code != http.StatusBadRequest || !strings.Contains(body, `"INVALID_REQUEST"`) || !strings.Contains(body, tc.badField) {
				t.Errorf("invalid body %s: %d %s, want 400 naming %s", tc.bad, code, body, tc.badField)
			}
			if w := r.Sim.WriteRequests(t); len(w) != 0 {
				t.Errorf("the invalid request reached the API: %v", w)
			}
			path := tc.path
			if tc.op == "deleteReplicaSet" || tc.op == "setReplicaSetEnvironment" {
				path += "?confirm=" + rs[1] // orders-read is PROD
			}
			code, _, body = r.Admin(t, tc.method, path, tc.good)
			if code != tc.want {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, path, code, body, tc.want)
			}
			if n := r.Sim.WriteRequests(t)[tc.op]; n != 1 {
				t.Errorf("%s reached the API %d times, want 1", tc.op, n)
			}
			if tc.seen != nil {
				testbin.WaitFor(t, 30*time.Second, "/metrics to show "+tc.op, tc.seen)
			}
		})
	}
	testbin.WaitFor(t, 30*time.Second, "the request counter", r.MetricIs("clouddb_exporter_admin_requests_total", 1, "operation", "resizeService", "code", "202"))
	testbin.WaitFor(t, 30*time.Second, "the deleted service to leave /metrics", func() bool {
		body, _ := testbin.Scrape(t, r.URL)
		return !strings.Contains(body, `service_id="`+dev+`"`)
	})
}

func TestAdminGuards(t *testing.T) {
	t.Parallel()
	r := startAdmin(t, instantSim, "--admin.allow=deleteService", "--admin.allow=resizeService", "--admin.allow=createService")
	f := demoIDs(t, r)
	p := "/api/v1/projects/demo-project"
	orders := f.service["orders-db"]
	resize := p + "/services/" + f.service["embeddings"] + "/resize"

	t.Run("authentication", func(t *testing.T) {
		for name, auth := range map[string]string{"none": "", "wrong token": "Bearer wrong-token", "basic": "Basic ZTJlOmUyZQ=="} {
			code, h, body := r.Admin(t, "POST", resize, `{"cpu_millis":1000,"memory_gbs":4}`, "Authorization", auth)
			if code != http.StatusUnauthorized || h.Get("WWW-Authenticate") == "" || !strings.Contains(body, `"UNAUTHORIZED"`) {
				t.Errorf("%s: %d %v %s", name, code, h, body)
			}
		}
	})
	t.Run("disallowed operation", func(t *testing.T) {
		code, _, body := r.Admin(t, "POST", p+"/vpcs", `{"name":"v","cidr":"10.0.0.0/16","region_code":"r"}`)
		if code != http.StatusForbidden || !strings.Contains(body, "OPERATION_NOT_ALLOWED") {
			t.Errorf("%d %s", code, body)
		}
	})
	t.Run("unknown project", func(t *testing.T) {
		code, _, body := r.Admin(t, "POST", "/api/v1/projects/someone-else/services/x/resize", `{"cpu_millis":1000,"memory_gbs":4}`)
		if code != http.StatusForbidden || !strings.Contains(body, "PROJECT_NOT_CONFIGURED") {
			t.Errorf("%d %s", code, body)
		}
	})
	if w := r.Sim.WriteRequests(t); len(w) != 0 {
		t.Errorf("refused requests reached the API: %v", w)
	}
	t.Run("PROD delete", func(t *testing.T) {
		code, _, body := r.Admin(t, "DELETE", p+"/services/"+orders, "")
		if code != http.StatusPreconditionRequired || !strings.Contains(body, "?confirm="+orders) {
			t.Fatalf("without confirm: %d %s", code, body)
		}
		if n := r.Sim.WriteRequests(t)["deleteService"]; n != 0 {
			t.Fatalf("deleteService sent %d times without confirmation", n)
		}
		if code, _, body := r.Admin(t, "DELETE", p+"/services/"+orders+"?confirm="+orders, ""); code != http.StatusAccepted {
			t.Fatalf("with confirm: %d %s", code, body)
		}
		if n := r.Sim.WriteRequests(t)["deleteService"]; n != 1 {
			t.Errorf("deleteService sent %d times", n)
		}
	})
	t.Run("dry run", func(t *testing.T) {
		r.Sim.ResetRequests(t)
		code, _, body := r.Admin(t, "POST", resize+"?dry_run=true", `{"cpu_millis":1000,"memory_gbs":4}`)
		if code != http.StatusOK || !strings.Contains(body, `"dry_run":true`) || !strings.Contains(body, `"path":"/projects/demo-project/services/`) {
			t.Errorf("%d %s", code, body)
		}
		if w := r.Sim.WriteRequests(t); len(w) != 0 {
			t.Errorf("a dry run reached the API: %v", w)
		}
	})
	t.Run("idempotent replay", func(t *testing.T) {
		r.Sim.ResetRequests(t)
		body := `{"name":"e2e-idem","addons":[],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`
		c1, h1, b1 := r.Admin(t, "POST", p+"/services", body, "Idempotency-Key", "e2e-key")
		c2, h2, b2 := r.Admin(t, "POST", p+"/services", body, "Idempotency-Key", "e2e-key")
		if c1 != 202 || c2 != 202 || b1 != b2 || h2.Get("Idempotent-Replayed") != "true" || h1.Get("Cache-Control") != "no-store" {
			t.Errorf("first %d %v %s; second %d %v %s", c1, h1, b1, c2, h2, b2)
		}
		if n := r.Sim.WriteRequests(t)["createService"]; n != 1 {
			t.Errorf("createService sent %d times, want 1", n)
		}
		c3, _, b3 := r.Admin(t, "POST", p+"/services", strings.Replace(body, "e2e-idem", "e2e-other", 1), "Idempotency-Key", "e2e-key")
		if c3 != http.StatusConflict || !strings.Contains(b3, "IDEMPOTENCY_KEY_REUSED") {
			t.Errorf("reused key: %d %s", c3, b3)
		}
	})
	t.Run("upstream errors", func(t *testing.T) {
		for _, tc := range []struct {
			fault, path string
			want        int
			code        string
		}{
			{"", p + "/services/nosuchservice/resize", 404, "NOT_FOUND"},
			{"", p + "/services/" + f.service["legacy-reports"] + "/resize", 409, "CONFLICT"},
			{`{"operation":"resizeService","status":500,"count":1}`, resize, 500, "INTERNAL_ERROR"},
			{`{"operation":"resizeService","drop_connection":true,"count":1}`, resize, 502, "UPSTREAM_UNAVAILABLE"},
		} {
			if tc.fault != "" {
				r.Sim.Fault(t, tc.fault)
			}
			code, _, body := r.Admin(t, "POST", tc.path, `{"cpu_millis":1000,"memory_gbs":4}`)
			if code != tc.want || !strings.Contains(body, `"code":"`+tc.code+`"`) {
				t.Errorf("%s %s: %d %s, want %d %s", tc.fault, tc.path, code, body, tc.want, tc.code)
			}
		}
	})
}

func TestAdminBasicAuth(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("e2e-basic-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(webConfig, []byte("basic_auth_users:\n  operator: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startAdmin(t, instantSim, "--admin.web-config.file="+webConfig)
	f := demoIDs(t, r)
	resize := "/api/v1/projects/demo-project/services/" + f.service["embeddings"] + "/resize"
	body := `{"cpu_millis":1000,"memory_gbs":4}`
	for _, tc := range []struct {
		user, pass string
		want       int
	}{
		{"operator", "wrong-password", 401},
		{"nobody", "e2e-basic-password", 401},
		{"operator", "e2e-basic-password", 202},
	} {
		req, _ := http.NewRequest(http.MethodPost, r.AdminURL+resize, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(tc.user, tc.pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == 401 && !strings.Contains(string(b), "UNAUTHORIZED")) {
			t.Errorf("%s/%s: %d %s, want %d", tc.user, tc.pass, resp.StatusCode, b, tc.want)
		}
	}
	// A token is no basic-auth credential.
	if code, _, _ := r.Admin(t, "POST", resize, body, "Authorization", "Bearer e2e-admin-token-value"); code != http.StatusUnauthorized {
		t.Errorf("a bearer token against basic auth: %d", code)
	}
	// Deletes are not in the default allow list.
	req, _ := http.NewRequest(http.MethodDelete, r.AdminURL+"/api/v1/projects/demo-project/services/"+f.service["dev-sandbox"], nil)
	req.SetBasicAuth("operator", "e2e-basic-password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("deleteService by default: %d", resp.StatusCode)
	}
	if !strings.Contains(r.Output(), "caller=operator") {
		t.Error("the audit log line does not name the basic-auth user")
	}
}

func TestAdminOperationTracking(t *testing.T) {
	t.Parallel()
	r := startAdmin(t, []string{"--timing.configure=3s"})
	f := demoIDs(t, r)
	svc := f.service["embeddings"]
	code, h, body := r.Admin(t, "POST", "/api/v1/projects/demo-project/services/"+svc+"/resize", `{"cpu_millis":6000,"memory_gbs":24}`)
	if code != http.StatusAccepted {
		t.Fatalf("resize: %d %s", code, body)
	}
	id := h.Get("X-Request-Id")
	op := func() map[string]any {
		_, _, body := r.Admin(t, "GET", "/api/v1/operations", "")
		var list struct{ Operations []map[string]any }
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("operations: %v %s", err, body)
		}
		for _, o := range list.Operations {
			if o["id"] == id {
				return o
			}
		}
		t.Fatalf("operation %s not listed: %s", id, body)
		return nil
	}
	testbin.WaitFor(t, 30*time.Second, "the resize to be tracked as pending while CONFIGURING", func() bool {
		o := op()
		return o["state"] == "pending" && o["last_status"] == "CONFIGURING"
	})
	testbin.WaitFor(t, 60*time.Second, "the resize to succeed", func() bool {
		o := op()
		return o["state"] == "succeeded" && o["last_status"] == "READY" && o["settled_at"] != nil
	})
	testbin.WaitFor(t, 30*time.Second, "the duration histogram", r.MetricIs("clouddb_exporter_admin_operation_duration_seconds", 1, "operation", "resizeService", "result", "succeeded"))
	testbin.WaitFor(t, 30*time.Second, "the new size on /metrics", r.MetricIs("clouddb_service_cpu_cores", 6, "service_id", svc))
}

func TestAdminStartupErrors(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	dir := t.TempDir()
	token, shortToken := filepath.Join(dir, "token"), filepath.Join(dir, "short-token")
	webConfig := filepath.Join(dir, "web.yml")
	hash, _ := bcrypt.GenerateFromPassword([]byte("x"), bcrypt.MinCost)
	for name, content := range map[string]string{token: "t0ken-0123456789\n", shortToken: "t0ken\n", webConfig: "basic_auth_users:\n  a: " + string(hash) + "\n"} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	okEnv := []string{"CLOUDDB_API_URL=https://api.example.net/v1", "CLOUDDB_API_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=ak", "CLOUDDB_SECRET_KEY=topsecret-sk"}
	listen := "--admin.listen-address=127.0.0.1:0"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no authentication", []string{listen}, "--admin.listen-address needs authentication"},
		{"basic auth and token", []string{listen, "--admin.token-file=" + token, "--admin.web-config.file=" + webConfig}, "both use the Authorization header"},
		{"unknown allow name", []string{listen, "--admin.token-file=" + token, "--admin.allow=dropDatabase"}, "is not an operation name"},
		{"read operation allowed", []string{listen, "--admin.token-file=" + token, "--admin.allow=getService"}, "is a read operation"},
		{"token without listener", []string{"--admin.token-file=" + token}, "--admin.token-file is set but --admin.listen-address is empty"},
		{"missing token file", []string{listen, "--admin.token-file=" + filepath.Join(dir, "nope")}, "--admin.token-file"},
		{"simulate beyond loopback", []string{"--admin.listen-address=:0"}, "--admin.listen-address needs authentication"},
		{"clear text beyond loopback", []string{"--admin.listen-address=:0", "--admin.token-file=" + token}, "--admin.allow-insecure-listener"},
		{"short token", []string{listen, "--admin.token-file=" + shortToken}, "--admin.token-file (CLOUDDB_ADMIN_TOKEN_FILE): the token is shorter than 8 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := okEnv
			args := tc.args
			if tc.name == "simulate beyond loopback" {
				env, args = nil, append(args, "--simulate")
			}
			code, out := testbin.Run(t, bin, env, args...)
			if code != 2 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, tc.want, out)
			}
			if strings.Contains(out, "t0ken") || strings.Contains(out, "topsecret-sk") {
				t.Errorf("a secret is in the output:\n%s", out)
			}
		})
	}
}

// TestAdminSimulateToken: --simulate on loopback generates a token, prints
// it once to stdout, and it works.
func TestAdminSimulateToken(t *testing.T) {
	t.Parallel()
	adminAddr := testbin.FreeAddr(t)
	p, _ := startExporter(t, nil, "--simulate", "--admin.listen-address="+adminAddr)
	var token string
	for _, line := range strings.Split(p.Output(), "\n") {
		if _, after, ok := strings.Cut(line, "Admin token for this --simulate run (shown once): "); ok {
			token = strings.TrimSpace(after)
		}
	}
	if token == "" || strings.Count(p.Output(), token) != 1 {
		t.Fatalf("no token printed once:\n%s", p.Output())
	}
	r := &testbin.Exporter{AdminURL: "http://" + adminAddr, AdminAuth: "Bearer " + token}
	testbin.WaitFor(t, 30*time.Second, "the admin listener", func() bool {
		code, _, _ := r.Admin(t, "GET", "/api/v1/operations", "")
		return code == http.StatusOK
	})
}

// TestAdminLeaksNoSecrets creates and forks services and changes a
// password through the admin surface with debug logs and an audit file,
// then looks for every secret in the output, the audit file and /metrics.
func TestAdminLeaksNoSecrets(t *testing.T) {
	t.Parallel()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	r := startAdmin(t, instantSim, "--admin.audit-log="+audit, "--admin.allow=createService", "--admin.allow=forkService", "--admin.allow=updatePassword")
	f := demoIDs(t, r)
	p := "/api/v1/projects/demo-project"
	secrets := []string{r.AdminToken, testbin.SimAccessKey, testbin.SimSecretKey, testbin.SimAPIKey, "e2e-first-password", "e2e-second-password"}
	for i, call := range []struct{ path, body string }{
		{p + "/services", `{"name":"leak-a","addons":["ai"],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`},
		{p + "/services/" + f.service["search-ai"] + "/forkService", `{"fork_strategy":"NOW","name":"leak-fork"}`},
	} {
		code, h, body := r.Admin(t, "POST", call.path, call.body, "Idempotency-Key", fmt.Sprintf("leak-%d", i))
		var svc struct {
			ID       string `json:"service_id"`
			Password string `json:"initial_password"`
		}
		if err := json.Unmarshal([]byte(body), &svc); code != http.StatusAccepted || err != nil || svc.Password == "" || h.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %v %s", call.path, code, h, body)
		}
		secrets = append(secrets, svc.Password)
		// Change the new service's password, also by dry run and with a
		// refused body.
		pw := p + "/services/" + svc.ID + "/updatePassword"
		pass := []string{"e2e-first-password", "e2e-second-password"}[i]
		if code, _, body := r.Admin(t, "POST", pw, `{"password":"`+pass+`"}`); code != http.StatusNoContent {
			t.Fatalf("updatePassword: %d %s", code, body)
		}
		r.Admin(t, "POST", pw+"?dry_run=true", `{"password":"`+pass+`"}`)
		r.Admin(t, "POST", pw, `{"password":"`+pass+`","unknown":1}`)
	}
	// Every request was audited: the readiness probe of startAdmin and
	// the eight above, and the four writes sent upstream (two creates,
	// two updatePassword) also by an "accepted" record before the call;
	// the "settled" records of the tracked creates come when they settle.
	testbin.WaitFor(t, 10*time.Second, "thirteen audit records", func() bool {
		b, _ := os.ReadFile(audit)
		return strings.Count(string(b), "\n")-strings.Count(string(b), `"event":"settled"`) == 13
	})
	info, err := os.Stat(audit)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode: %v %v", info.Mode(), err)
	}
	auditLog, _ := os.ReadFile(audit)
	metrics, _ := testbin.Scrape(t, r.URL)
	_, feed := testbin.Get(r.URL + "/api/v1/changes")
	_, status := testbin.Get(r.URL + "/")
	for where, text := range map[string]string{"output": r.Output(), "audit log": string(auditLog), "/metrics": metrics,
		"change feed": feed, "status page": status} {
		for _, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("the %s holds the secret %q", where, secret)
			}
		}
	}
	if !strings.Contains(string(auditLog), `"operation":"updatePassword"`) || !strings.Contains(string(auditLog), `"caller":"token"`) {
		t.Errorf("audit log lacks records:\n%s", auditLog)
	}
}
