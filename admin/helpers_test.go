package admin

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/internal/syncbuf"
	"github.com/clouddb/clouddb_exporter/poller"
)

const (
	testProject   = "demo-project"
	testToken     = "admin-test-token-value"
	testAccessKey = "AKadmintest"
	testSecretKey = "SKadmintopsecret"
)

// env is an admin surface in front of an in-process simulator with the
// demo scenario.
type env struct {
	t      testing.TB
	sim    *cloudsim.Sim
	clock  *fakeclock.Clock
	client *apiclient.Client
	poller *poller.Poller
	srv    *Server
	url    string
	reg    *prometheus.Registry
	audit  *syncbuf.Buffer
	logs   *syncbuf.Buffer
}

type envOption func(*Options, *cloudsim.Timings)

func withOptions(f func(*Options)) envOption {
	return func(o *Options, _ *cloudsim.Timings) { f(o) }
}

func withTimings(t cloudsim.Timings) envOption {
	return func(_ *Options, tm *cloudsim.Timings) { *tm = t }
}

func newEnv(t testing.TB, options ...envOption) *env {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	opts := Options{
		Token:            testToken,
		Allow:            WriteOperations(),
		TrackInterval:    10 * time.Millisecond,
		OperationTimeout: time.Minute,
		RequestTimeout:   10 * time.Second,
	}
	var timings cloudsim.Timings
	for _, o := range options {
		o(&opts, &timings)
	}
	sim := cloudsim.New(cloudsim.Options{
		Credentials: []cloudsim.Credential{{AccessKey: testAccessKey, SecretKey: testSecretKey, ProjectID: testProject}},
		Timings:     timings,
		Seed:        1,
		Clock:       clock.Now,
	})
	sim.LoadDemo(testProject)
	upstream := httptest.NewServer(sim)
	t.Cleanup(upstream.Close)
	client, err := apiclient.New(apiclient.Config{
		BaseURL: upstream.URL + "/v1", ProjectID: testProject,
		AccessKey: testAccessKey, SecretKey: testSecretKey,
		RateLimit: float64(rate.Inf), MaxRetries: -1, Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := poller.New(client, poller.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p.Poll(ctx)

	e := &env{t: t, sim: sim, clock: clock, client: client, poller: p, reg: prometheus.NewRegistry(), audit: &syncbuf.Buffer{}, logs: &syncbuf.Buffer{}}
	opts.Projects = func(id string) (Project, bool) {
		if id != testProject {
			return Project{}, false
		}
		return Project{Client: client, Poller: p}, true
	}
	opts.Registerer = e.reg
	opts.AuditLog = e.audit
	opts.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	// After the front's Close (no request in flight), and before what the
	// test registered earlier (an audit log's close, its directory's removal).
	t.Cleanup(srv.Close)
	front := httptest.NewServer(srv)
	t.Cleanup(front.Close)
	e.url = front.URL
	sim.ResetRequestCounts()
	return e
}

// answer is one response of the surface.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %q", err, a.body)
	}
	return m
}

// do sends a request with the test token unless headers set another
// Authorization (an empty value sends none), and a body as JSON unless
// headers set another Content-Type.
func (e *env) do(method, path, body string, headers ...string) answer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// ids of the demo scenario.
type demoIDs struct {
	service  map[string]string // by name
	rs       map[string][2]string
	vpc      map[string]string
	peerings map[string][]string // by VPC name
}

func (e *env) demo() demoIDs {
	e.t.Helper()
	ctx := context.Background()
	d := demoIDs{service: map[string]string{}, rs: map[string][2]string{}, vpc: map[string]string{}, peerings: map[string][]string{}}
	services, err := e.client.ListServices(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range services {
		d.service[s.Name] = s.ServiceID
		list, err := e.client.ListReplicaSets(ctx, s.ServiceID)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, rs := range list {
			d.rs[rs.Name] = [2]string{s.ServiceID, rs.ID}
		}
	}
	vpcs, err := e.client.ListVPCs(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, v := range vpcs {
		d.vpc[v.Name] = v.ID
		list, err := e.client.ListPeerings(ctx, v.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, p := range list {
			d.peerings[v.Name] = append(d.peerings[v.Name], p.ID)
		}
	}
	e.sim.ResetRequestCounts()
	return d
}

// sent returns the simulator's request counts and resets them.
func (e *env) sent() map[string]int {
	c := e.sim.RequestCounts()
	e.sim.ResetRequestCounts()
	return c
}
