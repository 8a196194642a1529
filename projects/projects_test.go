package projects

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/syncbuf"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

func project(url, id string) config.Project {
	return config.Project{
		ID:          id,
		API:         config.API{URL: url, Timeout: 5 * time.Second, RateLimit: 100, Burst: 10, MaxRetries: 1},
		Collect:     config.Collect{Interval: time.Hour, TransitionInterval: time.Hour, MaxStaleness: 2 * time.Hour, Concurrency: 2},
		Credentials: config.Credentials{AccessKey: apiclient.Secret("ak-" + id), SecretKey: apiclient.Secret("sk-" + id)},
	}
}

func TestApply(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Seed: 1, Credentials: []cloudsim.Credential{
		{AccessKey: "ak-a", SecretKey: "sk-a", ProjectID: "a"},
		{AccessKey: "ak-b", SecretKey: "sk-b", ProjectID: "b"},
	}})
	sim.LoadDemo("a")
	sim.LoadFleet("b", cloudsim.Fleet{Services: 2})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	url := srv.URL + "/v1"

	api := apimetrics.New(nil)
	expo := exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, expo, "test")
	defer m.Stop()

	scrape := func() string {
		rec := httptest.NewRecorder()
		expo.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Body.String()
	}
	ready := func() bool { return (m.NotReady() == "") }

	if m.NotReady() == "" {
		t.Error("ready with no project")
	}
	if err := m.Apply([]config.Project{project(url, "a"), project(url, "b")}); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, 10*time.Second, "both projects' first cycle", ready)
	if got := runningIDs(m); got != "a,b" {
		t.Errorf("ids %s", got)
	}
	if snaps := m.Snapshots(); len(snaps) != 2 || snaps[0].ProjectID != "a" || len(snaps[1].Services) != 2 {
		t.Errorf("snapshots: %d", len(snaps))
	}
	a1, _ := m.Get("a")
	b1, _ := m.Get("b")

	// Unchanged a keeps its poller; changed b restarts.
	changed := project(url, "b")
	changed.Collect.Concurrency = 3
	if err := m.Apply([]config.Project{project(url, "a"), changed}); err != nil {
		t.Fatal(err)
	}
	a2, _ := m.Get("a")
	b2, _ := m.Get("b")
	if a2 != a1 || b2 == b1 {
		t.Errorf("unchanged project restarted (%v) or changed one kept (%v)", a2 != a1, b2 == b1)
	}

	// A configuration that cannot be applied leaves everything running.
	bad := project("not a url", "c")
	if err := m.Apply([]config.Project{project(url, "a"), bad}); err == nil {
		t.Fatal("want an error for an invalid project")
	}
	if got := runningIDs(m); got != "a,b" {
		t.Errorf("after a failed apply: %s, want a,b still running", got)
	}

	// Removing b stops it and drops its series.
	testbin.WaitFor(t, 10*time.Second, "b's restarted cycle", ready)
	if !strings.Contains(scrape(), `project_id="b"`) {
		t.Fatal("b's series missing before removal")
	}
	if err := m.Apply([]config.Project{project(url, "a")}); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get("b"); ok {
		t.Error("b still running")
	}
	if out := scrape(); strings.Contains(out, `project_id="b"`) || !strings.Contains(out, `project_id="a"`) {
		t.Error("b's series not removed, or a's lost")
	}
}

// TestStoppedPollerNeverPublishes: a caller still holding a removed
// project's poller (an admin operation being tracked across a reload) must
// not bring its series back.
func TestStoppedPollerNeverPublishes(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Seed: 1, Credentials: []cloudsim.Credential{{AccessKey: "ak-a", SecretKey: "sk-a", ProjectID: "a"}}})
	sim.LoadDemo("a")
	srv := httptest.NewServer(sim)
	defer srv.Close()
	api := apimetrics.New(nil)
	expo := exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, expo, "test")
	defer m.Stop()
	if err := m.Apply([]config.Project{project(srv.URL+"/v1", "a")}); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, 10*time.Second, "the first cycle", func() bool { return m.NotReady() == "" })
	held, _ := m.Get("a")
	serviceID := held.Poller.Snapshot().Services[0].ServiceID
	if err := m.Apply(nil); err != nil {
		t.Fatal(err)
	}
	// A change the refresh would publish.
	if err := sim.SetServiceStatus("a", serviceID, "UNSTABLE"); err != nil {
		t.Fatal(err)
	}
	if err := held.Poller.RefreshService(context.Background(), serviceID); err == nil {
		t.Error("a stopped poller refreshed without an error")
	}
	rec := httptest.NewRecorder()
	expo.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if strings.Contains(rec.Body.String(), `project_id="a"`) {
		t.Error("a stopped poller published: the removed project's series are back")
	}
}

// TestWatchCredentialsAtItsInterval: the key-file check runs at
// Manager.CredentialCheckInterval, so that a test can rotate keys many
// times in a row without waiting 10 s for each.
func TestWatchCredentialsAtItsInterval(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Seed: 1, Credentials: []cloudsim.Credential{{AccessKey: "ak-a", SecretKey: "sk-a", ProjectID: "a"}}})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	api := apimetrics.New(nil)
	m := New(t.Context(), slog.New(slog.DiscardHandler), api, exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil), "test")
	m.CredentialCheckInterval = 20 * time.Millisecond
	defer m.Stop()
	dir := t.TempDir()
	cfg := project(srv.URL+"/v1", "a")
	cfg.Credentials.Files = writeKeys(t, dir, "ak-a", "sk-a")
	if err := m.Apply([]config.Project{cfg}); err != nil {
		t.Fatal(err)
	}
	go m.WatchCredentials(t.Context())
	p, _ := m.Get("a")
	for i := range 3 {
		next := "ak-" + strconv.Itoa(i)
		writeKeys(t, dir, next, "sk-a")
		testbin.WaitFor(t, 2*time.Second, "the check to install the rotated key", func() bool {
			return p.creds.current().AccessKey == apiclient.Secret(next)
		})
	}
}

// TestHalfRotatedKeysNotInstalled: plain key files are rotated one after
// the other, so a check can read the new access key with the old secret
// key. That pair is refused by the provider while the old one still works:
// the check installs a pair only once the next check reads it again.
func TestHalfRotatedKeysNotInstalled(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Seed: 1, Credentials: []cloudsim.Credential{{AccessKey: "ak-a", SecretKey: "sk-a", ProjectID: "a"}}})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	api := apimetrics.New(nil)
	m := New(t.Context(), slog.New(slog.DiscardHandler), api, exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil), "test")
	defer m.Stop()
	dir := t.TempDir()
	cfg := project(srv.URL+"/v1", "a")
	cfg.Credentials.Files = writeKeys(t, dir, "ak-a", "sk-a")
	if err := m.Apply([]config.Project{cfg}); err != nil {
		t.Fatal(err)
	}
	p, _ := m.Get("a")
	m.checkCredentials()

	// The access key file is written, the secret key file not yet.
	if err := os.WriteFile(cfg.Credentials.Files.AccessKey, []byte("ak-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.checkCredentials()
	if got := p.creds.current(); got.AccessKey != "ak-a" || got.SecretKey != "sk-a" {
		t.Fatalf("a check between the two writes installed %q/%q, want the old pair kept", got.AccessKey, got.SecretKey)
	}
	if err := os.WriteFile(cfg.Credentials.Files.SecretKey, []byte("sk-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.checkCredentials()
	if got := p.creds.current(); got.AccessKey != "ak-a" {
		t.Fatalf("a pair read once was installed (%q): it may still be half-written", got.AccessKey)
	}
	m.checkCredentials()
	if got := p.creds.current(); got.AccessKey != "ak-b" || got.SecretKey != "sk-b" {
		t.Fatalf("after two checks read the same pair, %q/%q in use, want ak-b/sk-b", got.AccessKey, got.SecretKey)
	}
}

// TestApplyWarnsOfShortKeys: keys too short to be real are not redacted
// (apiclient.MinKeyLength); the operator is told once, by name, never by value.
func TestApplyWarnsOfShortKeys(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var logs syncbuf.Buffer
	m := New(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)), apimetrics.New(nil), exposition.New(nil, nil), "test")
	defer m.Stop()
	short := project(srv.URL+"/v1", "short")
	short.Credentials = config.Credentials{AccessKey: "ak", SecretKey: "long-enough-secret"}
	long := project(srv.URL+"/v1", "long")
	long.Credentials = config.Credentials{AccessKey: "access-key-1", SecretKey: "long-enough-secret"}
	if err := m.Apply([]config.Project{short, long}); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	want := `msg="API keys too short to be real keys; they are not redacted from the API's answers" project_id=short keys=access_key min_length=8`
	if !strings.Contains(out, want) || strings.Count(out, "too short") != 1 || strings.Contains(out, "=ak ") {
		t.Errorf("logs:\n%s\nwant one line %s", out, want)
	}
}

// runningIDs returns the ids of m's running projects, sorted and joined by commas.
func runningIDs(m *Manager) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return strings.Join(slices.Sorted(maps.Keys(m.running)), ",")
}
