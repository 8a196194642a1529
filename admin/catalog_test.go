package admin

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestCatalogDerivesRoutesAndAllow checks the admin surface against the
// API's operation catalog: every write operation is routed at its upstream
// method and path under /api/v1 and can be allowed; no read operation is
// routed or can be allowed.
func TestCatalogDerivesRoutesAndAllow(t *testing.T) {
	e := newEnv(t)
	want := map[string]string{
		"GET " + apiPrefix + "/operations":      opListOperations,
		"GET " + apiPrefix + "/operations/{id}": opGetOperation,
	}
	for _, o := range apiclient.Catalog() {
		if !o.Write {
			if err := CheckAllow("--admin.allow", []string{o.Name}); err == nil || !strings.Contains(err.Error(), "read operation") {
				t.Errorf("--admin.allow=%s: %v, want a read operation refused", o.Name, err)
			}
			if slices.Contains(WriteOperations(), o.Name) {
				t.Errorf("read operation %s listed as a write operation", o.Name)
			}
			continue
		}
		want[o.Method+" "+apiPrefix+o.Path] = o.Name
		if err := CheckAllow("--admin.allow", []string{o.Name}); err != nil {
			t.Errorf("--admin.allow=%s refused: %v", o.Name, err)
		}
	}
	for pattern, op := range want {
		if got := e.srv.patterns[pattern]; got != op {
			t.Errorf("route %q serves %q, want %q", pattern, got, op)
		}
	}
	for pattern, op := range e.srv.patterns {
		if _, ok := want[pattern]; !ok {
			t.Errorf("route %q (%s) is not derived from the catalog", pattern, op)
		}
	}
	if !slices.Equal(WriteOperations(), writeOperations(apiclient.Catalog())) || len(WriteOperations()) == 0 {
		t.Errorf("WriteOperations() = %v", WriteOperations())
	}
	for _, op := range DefaultAllow() {
		if slices.Contains(OptIn(), op) || !slices.Contains(WriteOperations(), op) {
			t.Errorf("DefaultAllow() has %s", op)
		}
	}
}

// TestAddingAnOperation adds a hypothetical write operation (the 2026
// revision's renameService) the way a developer would: one catalog entry
// plus its admin endpoint (validation, call, target). The route, its
// success status, its name in --admin.allow and in the metrics follow
// from those two; the catalog entry alone is refused at startup.
func TestAddingAnOperation(t *testing.T) {
	// renameService is in the catalog now; a copy under another name
	// stands for the next operation.
	rename := apiclient.Operation{
		Name: "renameServiceAgain", Method: http.MethodPost, Path: "/projects/{project_id}/services/{service_id}/renameAgain",
		Success: http.StatusOK, Write: true,
	}
	catalog := append(apiclient.Catalog(), rename)

	if _, err := New(context.Background(), Options{Projects: func(string) (Project, bool) { return Project{}, false }, Token: testToken, catalog: catalog}); err == nil || !strings.Contains(err.Error(), "renameServiceAgain has no admin endpoint") {
		t.Fatalf("a catalog entry without its validation: %v, want an error naming it", err)
	}

	type renameBody struct {
		Name *string `json:"name"`
	}
	var called []string
	endpoint := &endpoint{
		op: "renameServiceAgain",
		decode: func(raw []byte) (any, error) {
			b, err := decodeStrict[renameBody](raw)
			if err != nil {
				return nil, err
			}
			var c checker
			name := c.name("name", b.Name)
			return name, c.err()
		},
		call: func(_ context.Context, _ *apiclient.Client, v ids, body any) (any, error) {
			called = append(called, v[idService]+"="+body.(string))
			return &apiclient.Service{ServiceID: v[idService], Name: body.(string)}, nil
		},
		target: serviceTarget(settleNone),
	}
	e := newEnv(t, withOptions(func(o *Options) {
		o.catalog = catalog
		o.endpoints = append(endpoints(), endpoint)
		o.Allow = append(WriteOperations(), "renameServiceAgain")
	}))
	if err := checkAllow("--admin.allow", []string{"renameServiceAgain"}, catalog); err != nil {
		t.Errorf("--admin.allow=renameServiceAgain: %v", err)
	}
	if slices.Contains(defaultAllow(catalog, append(endpoints(), endpoint)), "renameServiceAgain") != true {
		t.Error("renameServiceAgain is not allowed by default")
	}
	svc := e.demo().service["orders-db"]
	if svc == "" {
		t.Fatal("no orders-db in the demo")
	}
	path := apiPrefix + "/projects/" + testProject + "/services/" + svc + "/renameAgain"
	if a := e.do("POST", path, `{"name":""}`); a.status != http.StatusBadRequest || a.json(t)["code"] != codeInvalidRequest {
		t.Errorf("invalid body: %d %s, want 400 invalid_request", a.status, a.body)
	}
	if a := e.do("GET", path, ""); a.status != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want 405", path, a.status)
	}
	a := e.do("POST", path, `{"name":"renamed"}`)
	if a.status != http.StatusOK || !strings.Contains(a.body, `"renamed"`) {
		t.Errorf("POST %s: %d %s, want the catalog's 200 with the service", path, a.status, a.body)
	}
	e.srv.background.Wait()
	if !slices.Equal(called, []string{svc + "=renamed"}) {
		t.Errorf("calls %v, want one with the path's service id and the validated name", called)
	}
	if n := testutil.ToFloat64(e.srv.metrics.requests.WithLabelValues("renameServiceAgain", "200")); n != 1 {
		t.Errorf("clouddb_exporter_admin_requests_total{operation=\"renameServiceAgain\",code=\"200\"} = %v, want 1", n)
	}
	if !strings.Contains(e.audit.String(), `"operation":"renameServiceAgain"`) {
		t.Errorf("the audit log does not name renameServiceAgain: %s", e.audit.String())
	}
}

// operationRule is an operation's name or an assertion of an upstream type.
var operationRule = regexp.MustCompile(`apiclient\.Op[A-Z]\w*|\.\(\*?apiclient\.\w+\)`)

// TestEndpointTableHoldsEveryRule keeps each operation's rules (guard,
// confirmation, opt-in, secrets, tracking) in its endpoint entry: outside
// the table's files, no code names an operation or asserts a request's or
// an answer's type, so that a new write is one entry and no switch
// elsewhere is forgotten.
func TestEndpointTableHoldsEveryRule(t *testing.T) {
	table := []string{"endpoint.go", "services.go", "replicasets.go", "vpcs.go", "peerings.go", "validate.go"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || slices.Contains(table, name) {
			continue
		}
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if m := operationRule.FindString(string(raw)); m != "" {
			t.Errorf("%s uses %s...: an operation's rule belongs in its endpoint entry", name, m)
		}
	}
}

// TestOptInEndpoints: the operations that lose data, lock people out or
// hand out a password are refused unless --admin.allow names them; they
// are the ones docs/api.md marks opt-in.
func TestOptInEndpoints(t *testing.T) {
	want := docOptIn(t)
	if len(want) < 6 {
		t.Fatalf("docs/api.md marks %v opt-in: its Admin surface column was not found", want)
	}
	for _, op := range want {
		if slices.Contains(DefaultAllow(), op) {
			t.Errorf("%s is allowed by default", op)
		}
	}
	if got := len(WriteOperations()) - len(DefaultAllow()); got != len(want) {
		t.Errorf("%d operations are opt-in, want %d: %v", got, len(want), want)
	}
}
