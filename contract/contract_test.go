package contract

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/admin"
	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/poller"
)

const (
	project   = "demo-project"
	accessKey = "AKcontract"
	secretKey = "SKcontractsecret"
	apiKey    = "contract-api-key"
	token     = "contract-admin-token"
)

// emptyInFirstRevision marks an answer that has a body in revision 2026 and
// none in the first revision.
const emptyInFirstRevision = "x-empty-in-first-revision"

// loadDocument loads and validates the project's OpenAPI document.
func loadDocument(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(filepath.Join("..", "docs", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("docs/api/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// proxy is a validating proxy in front of the simulator: it checks every
// request against the document before passing it on, and every answer
// before returning it.
type proxy struct {
	doc    *openapi3.T
	router routers.Router
	sim    http.Handler
	rev    string

	mu         sync.Mutex
	requests   []string // request violations
	answers    []string // answer violations
	operations map[string]int
}

func newProxy(t *testing.T, rev string, sim http.Handler) (*proxy, *httptest.Server) {
	t.Helper()
	p := &proxy{doc: loadDocument(t), sim: sim, rev: rev, operations: map[string]int{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.doc.Servers = openapi3.Servers{{URL: srv.URL + "/v1"}}
	router, err := gorillamux.NewRouter(p.doc)
	if err != nil {
		t.Fatal(err)
	}
	p.router = router
	return p, srv
}

func (p *proxy) violation(list *[]string, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*list = append(*list, fmt.Sprintf(format, args...))
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	body, _ := io.ReadAll(r.Body)
	what := r.Method + " " + r.URL.Path
	req := r.Clone(ctx)
	req.URL.Scheme, req.URL.Host = "http", r.Host
	req.Body = io.NopCloser(bytes.NewReader(body))

	var in *openapi3filter.RequestValidationInput
	route, params, err := p.router.FindRoute(req)
	if err != nil {
		p.violation(&p.requests, "%s: not in the document: %v", what, err)
	} else {
		p.mu.Lock()
		p.operations[route.Operation.OperationID]++
		p.mu.Unlock()
		in = &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: schemeGiven},
		}
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			p.violation(&p.requests, "%s %s: %v", what, body, err)
		}
	}

	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	p.sim.ServeHTTP(rec, r)
	if in != nil {
		p.checkAnswer(ctx, in, what, rec)
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// checkAnswer validates one answer of the simulator. The one tolerance is
// the document's own: an answer marked x-empty-in-first-revision has no
// body when the first revision is served.
func (p *proxy) checkAnswer(ctx context.Context, in *openapi3filter.RequestValidationInput, what string, rec *httptest.ResponseRecorder) {
	opts := &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}
	if resp := in.Route.Operation.Responses.Status(rec.Code); resp != nil && resp.Value != nil &&
		resp.Value.Extensions[emptyInFirstRevision] == true && p.rev == cloudsim.Revision2024 && rec.Body.Len() == 0 {
		opts.ExcludeResponseBody = true
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: opts,
	}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		p.violation(&p.answers, "%s answered %d %s: %v", what, rec.Code, truncate(rec.Body.String()), err)
	}
}

// schemeGiven checks that a request carries the Authorization scheme the
// document asks for; whether the keys are right is the simulator's to say.
func schemeGiven(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header.Get("Authorization")
	if scheme := in.SecurityScheme.Scheme; !strings.HasPrefix(strings.ToLower(h), strings.ToLower(scheme)+" ") {
		return fmt.Errorf("no %s Authorization header", scheme)
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// report fails the test for every violation.
func (p *proxy) report(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, v := range p.requests {
		t.Errorf("request violation: %s", v)
	}
	for _, v := range p.answers {
		t.Errorf("answer violation: %s", v)
	}
}

// sent returns how often each operation (by operationId) reached the proxy.
func (p *proxy) sent() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.operations))
	for k, v := range p.operations {
		out[k] = v
	}
	return out
}

// stack is the simulator with the demo fleet behind a validating proxy,
// and a client of it.
type stack struct {
	proxy  *proxy
	sim    *cloudsim.Sim
	client *apiclient.Client
}

func newStack(t *testing.T, rev string) *stack {
	t.Helper()
	sim := cloudsim.New(cloudsim.Options{
		Credentials: []cloudsim.Credential{{AccessKey: accessKey, SecretKey: secretKey, APIKey: apiKey, ProjectID: project, Name: "contract"}},
		Seed:        1,
		Revision:    rev,
	})
	sim.LoadDemo(project)
	p, srv := newProxy(t, rev, sim)
	client, err := apiclient.New(apiclient.Config{
		BaseURL: srv.URL + "/v1", ProjectID: project, AccessKey: accessKey, SecretKey: secretKey, APIKey: apiKey,
		RateLimit: float64(rate.Inf), MaxRetries: -1, Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &stack{proxy: p, sim: sim, client: client}
}

// TestDocumentCoversTheCatalog: every operation of the client's catalog is
// in the document, under its name, with its method, path and success status.
func TestDocumentCoversTheCatalog(t *testing.T) {
	doc := loadDocument(t)
	for _, o := range apiclient.Catalog() {
		item := doc.Paths.Value(o.Path)
		if item == nil {
			t.Errorf("%s: path %s is not in the document", o.Name, o.Path)
			continue
		}
		op := item.GetOperation(o.Method)
		switch {
		case op == nil:
			t.Errorf("%s: %s %s is not in the document", o.Name, o.Method, o.Path)
		case op.OperationID != o.Name:
			t.Errorf("%s %s: operationId %s, want %s", o.Method, o.Path, op.OperationID, o.Name)
		case op.Responses.Status(o.Success) == nil:
			t.Errorf("%s: no %d answer in the document", o.Name, o.Success)
		}
	}
}

// TestPollingConformsToTheDocument polls the demo fleet in both revisions
// and sends every read of the catalog: each request the client sends and
// each answer the simulator gives is valid for the document.
func TestPollingConformsToTheDocument(t *testing.T) {
	for _, rev := range []string{cloudsim.Revision2026, cloudsim.Revision2024} {
		t.Run(rev, func(t *testing.T) {
			s := newStack(t, rev)
			ctx := context.Background()
			poller.New(s.client, poller.Options{}).Poll(ctx)
			services, err := s.client.ListServices(ctx)
			if err != nil || len(services) == 0 {
				t.Fatalf("listServices: %d services, %v", len(services), err)
			}
			// The usage series with a name the fleet has (revision 2026;
			// the first revision answers 404, which the document allows too).
			id := services[0].ServiceID
			names, err := s.client.GetServiceMetricsAvailableSeries(ctx, id)
			if err != nil && rev == cloudsim.Revision2026 {
				t.Errorf("getServiceMetricsAvailableSeries: %v", err)
			}
			now := time.Now()
			series := apiclient.SeriesRequest{Name: "cloudsim_database_qps", From: apiclient.Time{Time: now.Add(-5 * time.Minute)}, To: apiclient.Time{Time: now}, BucketSeconds: 60}
			if len(names) > 0 {
				series.Name = names[0]
			}
			if _, err := s.client.GetServiceMetricsSeries(ctx, id, series); err != nil && rev == cloudsim.Revision2026 {
				t.Errorf("getServiceMetricsSeries: %v", err)
			}
			if _, err := s.client.GetServiceLogs(ctx, id, apiclient.LogsQuery{Since: now.Add(-time.Hour), Severities: []string{"ERROR"}}); err != nil && rev == cloudsim.Revision2026 {
				t.Errorf("getServiceLogs: %v", err)
			}
			everyResource(t, s.client, services)
			sendEveryRead(t, s, rev)
			sent := s.proxy.sent()
			for _, o := range apiclient.Catalog() {
				if !o.Write && sent[o.Name] == 0 {
					t.Errorf("the read %s was not sent", o.Name)
				}
			}
			s.proxy.report(t)
		})
	}
}

// everyResource reads each replica set list, VPC and peering of the fleet,
// so that every answer of the demo fleet is checked.
func everyResource(t *testing.T, c *apiclient.Client, services []apiclient.Service) {
	t.Helper()
	ctx := context.Background()
	for _, svc := range services {
		if _, err := c.ListReplicaSets(ctx, svc.ServiceID); err != nil {
			t.Errorf("listReplicaSets: %v", err)
		}
	}
	vpcs, err := c.ListVPCs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vpcs {
		if _, err := c.GetVPC(ctx, v.ID); err != nil {
			t.Errorf("getVPC: %v", err)
		}
		peerings, err := c.ListPeerings(ctx, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range peerings {
			if _, err := c.GetPeering(ctx, v.ID, pr.ID); err != nil {
				t.Errorf("getPeering: %v", err)
			}
		}
	}
}

// fleetNamed are the reads whose catalog example names what the demo fleet
// lacks (a series name): the test above sends one the fleet has.
var fleetNamed = []string{apiclient.OpGetServiceMetricsSeries}

// sendEveryRead sends each read of the catalog, with no case per operation,
// with the demo fleet's ids and its catalog example; it must succeed where
// the simulator routes it.
func sendEveryRead(t *testing.T, s *stack, rev string) {
	t.Helper()
	idOf := fleetIDs(t, demoFleet(t, s.client))
	for _, o := range apiclient.Catalog() {
		if o.Write {
			continue
		}
		before := s.sim.RequestCount(o.Name)
		err := callRead(t, s.client, o, idOf)
		routed := s.sim.RequestCount(o.Name) > before
		switch {
		case rev == cloudsim.Revision2026 && !routed:
			t.Errorf("%s is not routed in revision 2026: %v", o.Name, err)
		case err != nil && routed && !slices.Contains(fleetNamed, o.Name):
			t.Errorf("%s: %v", o.Name, err)
		}
	}
}

// fleetIDs gives each path placeholder a resource of the demo fleet: a
// service with a replica set, a VPC with a peering.
func fleetIDs(t *testing.T, d admin.Demo) func(string) string {
	t.Helper()
	ids := map[string]string{}
	if names := slices.Sorted(maps.Keys(d.ReplicaSets)); len(names) > 0 {
		ids["service_id"], ids["replica_set_id"] = d.ReplicaSets[names[0]][0], d.ReplicaSets[names[0]][1]
	}
	for _, name := range slices.Sorted(maps.Keys(d.Peerings)) {
		if len(d.Peerings[name]) > 0 {
			ids["vpc_id"], ids["peering_id"] = d.VPCs[name], d.Peerings[name][0]
			break
		}
	}
	if len(ids) != 4 {
		t.Fatalf("the demo fleet lacks a replica set or a peering: %v", ids)
	}
	return func(name string) string { return ids[name] }
}

// callRead calls a read's Client method, named after it, with the ids idOf
// gives and, when it takes one more, its catalog example.
func callRead(t *testing.T, c *apiclient.Client, o apiclient.Operation, idOf func(string) string) error {
	t.Helper()
	m := reflect.ValueOf(c).MethodByName(strings.ToUpper(o.Name[:1]) + o.Name[1:])
	if !m.IsValid() {
		t.Fatalf("read %s has no Client method named after it", o.Name)
	}
	args := []reflect.Value{reflect.ValueOf(context.Background())}
	for _, id := range o.IDs() {
		args = append(args, reflect.ValueOf(idOf(id)))
	}
	if e, ok := o.Example(); ok {
		args = append(args, reflect.ValueOf(e.Arg))
	}
	if m.Type().NumIn() != len(args) {
		t.Fatalf("read %s: method %v, called with %d arguments", o.Name, m.Type(), len(args))
	}
	out := m.Call(args)
	err, _ := out[len(out)-1].Interface().(error)
	return err
}

// write is one request to the admin surface; path and body may use the ids
// of earlier answers.
type write struct {
	op, method string
	path       func(ids) string
	body       string
	want       int
}

type ids map[string]string

// TestAdminWritesConformToTheDocument makes every write of the admin surface
// against the simulator: each reaches the API with a request valid for the
// document, and the simulator's answers (also those of the refreshes and
// tracking that follow) are valid too. Revision 2026 gets every write with
// its bodies; the first revision the writes it has, with the bodies it
// requires (region_code, nodes).
func TestAdminWritesConformToTheDocument(t *testing.T) {
	for _, rev := range []string{cloudsim.Revision2026, cloudsim.Revision2024} {
		t.Run(rev, func(t *testing.T) { adminWrites(t, rev) })
	}
}

// adminFront serves the admin surface, every write allowed, on a fresh
// stack.
func adminFront(t *testing.T, rev string) (*stack, string) {
	t.Helper()
	s := newStack(t, rev)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p := poller.New(s.client, poller.Options{})
	p.Poll(ctx)
	srv, err := admin.New(ctx, admin.Options{
		Token: token, Allow: admin.WriteOperations(),
		Projects: func(id string) (admin.Project, bool) {
			return admin.Project{Client: s.client, Poller: p, TrackInterval: 10 * time.Millisecond}, id == project
		},
		OperationTimeout: time.Minute, RequestTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(srv)
	t.Cleanup(front.Close)
	return s, front.URL
}

func adminWrites(t *testing.T, rev string) {
	s, frontURL := adminFront(t, rev)
	v := demoIDs(t, s.client)
	svc := func(name string) func(ids) string {
		return func(v ids) string { return "/projects/" + project + "/services/" + v[name] }
	}
	rs := func(v ids) string {
		return "/projects/" + project + "/services/" + v["orders"] + "/replicaSets/" + v["orders-read"]
	}
	vpc := func(v ids) string { return "/projects/" + project + "/vpcs/" + v["new-vpc"] }
	then := func(f func(ids) string, suffix string) func(ids) string {
		return func(v ids) string { return f(v) + suffix }
	}
	writes := []write{
		{apiclient.OpCreateService, "POST", func(ids) string { return "/projects/" + project + "/services" },
			`{"name":"contract-db","addons":["time-series"],"region_code":"us-east-1","cpu_millis":"1000","memory_gbs":"4"}`, 202},
		{apiclient.OpResizeService, "POST", then(svc("embeddings"), "/resize"), `{"cpu_millis":"4000","memory_gbs":"16"}`, 202},
		{apiclient.OpUpdatePassword, "POST", then(svc("embeddings"), "/updatePassword"), `{"password":"n3w-s3cret"}`, 204},
		{apiclient.OpSetServiceEnvironment, "POST", then(svc("embeddings"), "/setEnvironment"), `{"environment":"DEV"}`, 200},
		{apiclient.OpSetHA, "POST", then(svc("search-ai"), "/setHA"), `{"replica_count":1}`, 202},
		{apiclient.OpEnableServicePooler, "POST", then(svc("embeddings"), "/enablePooler"), ``, 200},
		{apiclient.OpDisableServicePooler, "POST", then(svc("embeddings"), "/disablePooler"), `{}`, 200},
		{apiclient.OpForkService, "POST", then(svc("search-ai"), "/forkService"), `{"fork_strategy":"NOW","name":"search-fork","region_code":"us-east-1","cpu_millis":"1000","memory_gbs":4}`, 202},
		{apiclient.OpCreateVPC, "POST", func(ids) string { return "/projects/" + project + "/vpcs" }, `{"name":"new-vpc","cidr":"10.30.0.0/16","region_code":"us-east-1"}`, 201},
		{apiclient.OpAttachToVPC, "POST", then(svc("dev-sandbox"), "/attachToVPC"), `{"vpc_id":"<new-vpc>"}`, 202},
		{apiclient.OpDetachFromVPC, "POST", then(svc("dev-sandbox"), "/detachFromVPC"), `{"vpc_id":"<new-vpc>"}`, 202},
		{apiclient.OpStopService, "POST", then(svc("dev-sandbox"), "/stop"), ``, 202},
		{apiclient.OpStartService, "POST", then(svc("dev-sandbox"), "/start"), ``, 202},
		{apiclient.OpRenameService, "POST", then(svc("dev-sandbox"), "/rename"), `{"name":"dev-sandbox-2"}`, 200},
		{apiclient.OpCreateReplicaSet, "POST", then(svc("embeddings"), "/replicaSets"), `{"name":"emb-read","cpu_millis":1000,"memory_gbs":4,"nodes":1}`, 202},
		{apiclient.OpResizeReplicaSet, "POST", then(rs, "/resize"), `{"cpu_millis":"2000","memory_gbs":8}`, 202},
		{apiclient.OpResizeReplicaSet, "POST", then(rs, "/resize"), `{"cpu_millis":"2000","memory_gbs":8,"nodes":2}`, 202},
		{apiclient.OpEnableReplicaSetPooler, "POST", then(rs, "/enablePooler"), ``, 200},
		{apiclient.OpDisableReplicaSetPooler, "POST", then(rs, "/disablePooler"), ``, 200},
		{apiclient.OpSetReplicaSetEnvironment, "POST", then(rs, "/setEnvironment"), `{"environment":"DEV"}`, 200},
		{apiclient.OpDeleteReplicaSet, "DELETE", rs, ``, 202},
		{apiclient.OpRenameVPC, "POST", then(vpc, "/rename"), `{"name":"new-vpc-2"}`, 200},
		{apiclient.OpCreatePeering, "POST", then(vpc, "/peerings"), `{"peer_account_id":"111122223333","peer_region_code":"eu-west-1","peer_vpc_id":"vpc-1"}`, 201},
		{apiclient.OpDeletePeering, "DELETE", func(v ids) string { return vpc(v) + "/peerings/" + v["new-peering"] }, ``, 204},
		{apiclient.OpDeleteVPC, "DELETE", vpc, ``, 204},
		{apiclient.OpDeleteService, "DELETE", svc("dev-sandbox"), ``, 202},
	}
	var covered []string
	for _, w := range writes {
		covered = append(covered, w.op)
	}
	for _, op := range admin.WriteOperations() {
		if !slices.Contains(covered, op) {
			t.Run(op, func(t *testing.T) { exampleWrite(t, rev, op) })
		}
	}

	for _, w := range writes {
		if rev == cloudsim.Revision2024 && (slices.Contains(revision2026Writes, w.op) || w.op == apiclient.OpResizeReplicaSet && !strings.Contains(w.body, "nodes")) {
			continue
		}
		before := s.proxy.sent()[w.op]
		path := w.path(v)
		if w.method == "DELETE" && strings.Contains(path, "/replicaSets/") {
			path += "?confirm=" + v["orders-read"] // a PROD replica set
		}
		if resource, ok := strings.CutSuffix(path, "/setEnvironment"); ok {
			// A switch to DEV is guarded like a delete.
			path += "?confirm=" + resource[strings.LastIndex(resource, "/")+1:]
		}
		status, answer := do(t, frontURL, w.method, path, strings.ReplaceAll(w.body, "<new-vpc>", v["new-vpc"]))
		if status != w.want {
			t.Fatalf("%s %s: %d %s, want %d", w.method, path, status, answer, w.want)
		}
		if s.proxy.sent()[w.op] != before+1 {
			t.Errorf("%s did not reach the API once", w.op)
		}
		var created struct{ ID string }
		_ = json.Unmarshal(answer, &created)
		switch w.op {
		case apiclient.OpCreateVPC:
			v["new-vpc"] = created.ID
		case apiclient.OpCreatePeering:
			v["new-peering"] = created.ID
		}
		waitSettled(t, frontURL)
	}
	s.proxy.report(t)
}

// exampleWrite makes a write this file lists no request for: its admin
// endpoint's example, on a fresh demo fleet. A revision the simulator does
// not route it in skips it.
func exampleWrite(t *testing.T, rev, op string) {
	s, frontURL := adminFront(t, rev)
	var o apiclient.Operation
	if i := slices.IndexFunc(apiclient.Catalog(), func(o apiclient.Operation) bool { return o.Name == op }); i >= 0 {
		o = apiclient.Catalog()[i]
	}
	path, body, err := admin.Examples()[op].Request(o, project, demoFleet(t, s.client))
	if err != nil {
		t.Fatal(err)
	}
	status, answer := do(t, frontURL, o.Method, path, body)
	if status == http.StatusPreconditionRequired {
		// The guarded resource is the replica set in the path, else the service.
		segments, confirm := strings.Split(path, "/"), ""
		for i, name := range strings.Split(o.Path, "/") {
			if name == "{replica_set_id}" || name == "{service_id}" && confirm == "" {
				confirm = segments[i]
			}
		}
		path += "?confirm=" + confirm
		status, answer = do(t, frontURL, o.Method, path, body)
	}
	if want := cmp.Or(admin.Examples()[op].Status, o.Success); status != want {
		if rev == cloudsim.Revision2024 && status == http.StatusNotFound && s.proxy.sent()[op] == 1 {
			t.Skipf("%s is not in revision %s", op, rev)
		}
		t.Fatalf("%s %s: %d %s, want %d", o.Method, path, status, answer, want)
	}
	if s.proxy.sent()[op] != 1 {
		t.Errorf("%s did not reach the API once", op)
	}
	waitSettled(t, frontURL)
	s.proxy.report(t)
}

// revision2026Writes are the writes the first revision does not have.
var revision2026Writes = []string{apiclient.OpStartService, apiclient.OpStopService, apiclient.OpRenameService}

// demoIDs names the demo fleet's resources the writes address.
func demoIDs(t *testing.T, c *apiclient.Client) ids {
	t.Helper()
	ctx := context.Background()
	v := ids{}
	services, err := c.ListServices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range services {
		v[s.Name] = s.ServiceID
		list, err := c.ListReplicaSets(ctx, s.ServiceID)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range list {
			if rs.Name == "orders-read" {
				v["orders"], v["orders-read"] = s.ServiceID, rs.ID
			}
		}
	}
	for _, name := range []string{"embeddings", "search-ai", "dev-sandbox", "orders-read"} {
		if v[name] == "" {
			t.Fatalf("the demo fleet has no %s", name)
		}
	}
	return v
}

// demoFleet names every resource of the demo fleet, for an example.
func demoFleet(t *testing.T, c *apiclient.Client) admin.Demo {
	t.Helper()
	ctx := context.Background()
	d := admin.Demo{Services: map[string]string{}, ReplicaSets: map[string][2]string{}, VPCs: map[string]string{}, Peerings: map[string][]string{}}
	services, err := c.ListServices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range services {
		d.Services[s.Name] = s.ServiceID
		list, err := c.ListReplicaSets(ctx, s.ServiceID)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range list {
			d.ReplicaSets[rs.Name] = [2]string{s.ServiceID, rs.ID}
		}
	}
	vpcs, err := c.ListVPCs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vpcs {
		d.VPCs[v.Name] = v.ID
		peerings, err := c.ListPeerings(ctx, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range peerings {
			d.Peerings[v.Name] = append(d.Peerings[v.Name], p.ID)
		}
	}
	return d
}

// do sends one request to the admin surface.
func do(t *testing.T, base, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+"/api/v1"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// waitSettled waits until the admin surface has no operation pending, so
// that the next write finds its resource settled.
func waitSettled(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, raw := do(t, base, "GET", "/operations", "")
		var ops struct {
			Operations []struct{ State string } `json:"operations"`
		}
		if status == http.StatusOK && json.Unmarshal(raw, &ops) == nil &&
			!slices.ContainsFunc(ops.Operations, func(o struct{ State string }) bool { return o.State == "pending" }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(errors.New("admin operations still pending after 30s: " + string(raw)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProxyFindsViolations: the validating proxy reports a request the
// document refuses and an answer it refuses, so that the tests above can
// fail.
func TestProxyFindsViolations(t *testing.T) {
	svc := `{"service_id":"s","project_id":"p","name":"n","region_code":"r","service_type":"POSTGRES","status":"READY","created":"2026-01-02T03:04:05Z","resources":[]}`
	for _, tc := range []struct {
		name, method, path, body, answer string
		status                           int
		wantRequest, wantAnswer          bool
	}{
		{"valid", "POST", "/v1/projects/p/services/s/resize", `{"cpu_millis":"1000","memory_gbs":"4"}`, svc, 202, false, false},
		{"unknown request field", "POST", "/v1/projects/p/services/s/resize", `{"cpu_millis":"1000","memory_gbs":"4","nodes":2}`, svc, 202, true, false},
		{"size not digits", "POST", "/v1/projects/p/services/s/resize", `{"cpu_millis":"1k","memory_gbs":"4"}`, svc, 202, true, false},
		{"nodes in revision 2026's replica set body with strings", "POST", "/v1/projects/p/services/s/replicaSets/r/resize", `{"cpu_millis":"1000","memory_gbs":"4","nodes":0}`, `{"message":"ok"}`, 202, true, false},
		{"answer lacks a required field", "POST", "/v1/projects/p/services/s/resize", `{"cpu_millis":"1000","memory_gbs":"4"}`, `{"service_id":"s"}`, 202, false, true},
		{"answer with a bad time", "GET", "/v1/projects/p/services/s", ``, strings.Replace(svc, "2026-01-02T03:04:05Z", "yesterday", 1), 200, false, true},
		{"answer without the body revision 2026 sends", "POST", "/v1/projects/p/services/s/setHA", `{"replica_count":1}`, ``, 202, false, true},
		{"undocumented status", "POST", "/v1/projects/p/services/s/enablePooler", ``, `{"message":"ok"}`, 201, false, true},
		{"message with an extra field", "POST", "/v1/projects/p/services/s/enablePooler", ``, `{"message":"ok","id":"x"}`, 200, false, true},
		{"path not in the document", "GET", "/v1/projects/p/databases", ``, `[]`, 200, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.answer != "" {
					w.Header().Set("Content-Type", "application/json")
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.answer)
			})
			p, srv := newProxy(t, cloudsim.Revision2026, upstream)
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.SetBasicAuth("a", "b")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := len(p.requests) > 0; got != tc.wantRequest {
				t.Errorf("request violation %v, want %v: %v", got, tc.wantRequest, p.requests)
			}
			if got := len(p.answers) > 0; got != tc.wantAnswer {
				t.Errorf("answer violation %v, want %v: %v", got, tc.wantAnswer, p.answers)
			}
		})
	}
}
