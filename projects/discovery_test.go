package projects

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/syncbuf"
)

var quiet = slog.New(slog.DiscardHandler)

func discoveryTemplate(url string, cred cloudsim.Credential) config.Project {
	return config.Project{
		API:         config.API{URL: url, Timeout: 5 * time.Second, RateLimit: 100, Burst: 10},
		Collect:     config.Collect{Interval: time.Minute, TransitionInterval: 10 * time.Second, MaxStaleness: 5 * time.Minute, Concurrency: 2},
		Credentials: config.Credentials{AccessKey: apiclient.Secret(cred.AccessKey), SecretKey: apiclient.Secret(cred.SecretKey)},
	}
}

func TestDiscoveryLoadsTheUsersProjects(t *testing.T) {
	user := cloudsim.Credential{AccessKey: "u-ak", SecretKey: "u-sk", Projects: []string{"pb", "pa"}}
	srv := httptest.NewServer(cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{user}}))
	t.Cleanup(srv.Close)
	d, err := NewDiscovery(discoveryTemplate(srv.URL+"/v1", user), "test", nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "pa" || got[1].ID != "pb" || got[0].Name == "" || got[0].Credentials.AccessKey != "u-ak" {
		t.Errorf("discovered %+v", got)
	}
}

func TestDiscoveryOnTheFirstRevisionSaysWhy(t *testing.T) {
	cred := cloudsim.Credential{AccessKey: "ak", SecretKey: "sk", ProjectID: "p"}
	srv := httptest.NewServer(cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{cred}, Revision: cloudsim.Revision2024}))
	t.Cleanup(srv.Close)
	d, err := NewDiscovery(discoveryTemplate(srv.URL+"/v1", cred), "test", nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Load(t.Context()); err == nil || !strings.Contains(err.Error(), "--api.project-id") {
		t.Errorf("err = %v, want one naming --api.project-id", err)
	}
}

// requestLog is an apiclient.Observer that records the requests.
type requestLog struct {
	mu       sync.Mutex
	requests []string // operation and code
}

func (l *requestLog) ObserveRequest(op, code string, _ time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, op+" "+code)
}
func (l *requestLog) ObserveRetry(string)                        {}
func (l *requestLog) ObserveRateLimitWait(string, time.Duration) {}
func (l *requestLog) ObserveDecodeError(string)                  {}
func (l *requestLog) ObserveListTooLong(string)                  {}
func (l *requestLog) ObserveTextTruncated(string)                {}
func (l *requestLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests)
}

var _ apiclient.Observer = (*requestLog)(nil)

// TestDiscoveryIsObserved: GET /projects goes through the observer like
// every other API call, refusals included.
func TestDiscoveryIsObserved(t *testing.T) {
	user := cloudsim.Credential{AccessKey: "u-ak", SecretKey: "u-sk", Projects: []string{"pa"}}
	srv := httptest.NewServer(cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{user}}))
	t.Cleanup(srv.Close)
	log := &requestLog{}
	d, err := NewDiscovery(discoveryTemplate(srv.URL+"/v1", user), "test", log, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	refused, err := NewDiscovery(discoveryTemplate(srv.URL+"/v1", cloudsim.Credential{AccessKey: "u-ak", SecretKey: "wrong"}), "test", log, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refused.Load(t.Context()); err == nil {
		t.Fatal("a wrong secret key discovered projects")
	}
	if got, want := log.seen(), []string{"listProjects 200", "listProjects 401"}; !slices.Equal(got, want) {
		t.Errorf("observed %q, want %q", got, want)
	}
}

// writeKeys writes the access and secret key files in dir, aside and
// renamed, as a careful rotation does.
func writeKeys(t *testing.T, dir, access, secret string) config.CredentialFiles {
	t.Helper()
	files := config.CredentialFiles{AccessKey: filepath.Join(dir, "access"), SecretKey: filepath.Join(dir, "secret")}
	for path, v := range map[string]string{files.AccessKey: access, files.SecretKey: secret} {
		if err := os.WriteFile(path+".new", []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestDiscoveryPicksUpRotatedKeys: after the key files are rotated and the
// provider refuses the old keys, the discovery uses the new ones, and the
// projects it returns carry them and the files' paths: the Manager
// neither reverts a running project to the old keys nor loses track of
// its files.
func TestDiscoveryPicksUpRotatedKeys(t *testing.T) {
	const oldAccess, oldSecret, newAccess, newSecret = "old-access", "old-secret-value", "new-access", "new-secret-value"
	sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{{AccessKey: oldAccess, SecretKey: oldSecret, Projects: []string{"pa"}}}})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	template := discoveryTemplate(srv.URL+"/v1", cloudsim.Credential{AccessKey: oldAccess, SecretKey: oldSecret})
	template.Collect.Interval, template.Collect.TransitionInterval, template.Collect.MaxStaleness = time.Hour, time.Hour, 0
	template.Credentials.Files = writeKeys(t, dir, oldAccess, oldSecret)
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	d, err := NewDiscovery(template, "test", nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	api := apimetrics.New(nil)
	m := New(t.Context(), logger, api, exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil), "test")
	defer m.Stop()
	found, err := d.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(found); err != nil {
		t.Fatal(err)
	}

	if err := sim.RotateCredential(oldAccess, cloudsim.Credential{AccessKey: newAccess, SecretKey: newSecret}); err != nil {
		t.Fatal(err)
	}
	writeKeys(t, dir, newAccess, newSecret)
	sim.AddProject("pb")
	if found, err = d.Load(t.Context()); err != nil {
		t.Fatalf("discovery after the rotation: %v", err)
	}
	if len(found) != 2 || found[1].ID != "pb" {
		t.Fatalf("discovered %+v, want pa and the new pb", found)
	}
	for _, p := range found {
		if p.Credentials.AccessKey != newAccess || p.Credentials.SecretKey != newSecret || p.Credentials.Files != template.Credentials.Files {
			t.Errorf("project %s: keys %s/%s from %+v, want the rotated keys and the template's files", p.ID, p.Credentials.AccessKey.Reveal(), p.Credentials.SecretKey.Reveal(), p.Credentials.Files)
		}
	}
	if err := m.Apply(found); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"pa", "pb"} {
		p, _ := m.Get(id)
		if cur := p.creds.current(); cur.AccessKey != newAccess || cur.Files != template.Credentials.Files {
			t.Errorf("project %s runs with access key %s and files %+v, want the rotated key and the template's files", id, cur.AccessKey.Reveal(), cur.Files)
		}
		if _, err := p.Client.ListServices(t.Context()); err != nil {
			t.Errorf("project %s after the rotation: %v", id, err)
		}
	}

	out := logs.String()
	if !strings.Contains(out, `msg="API credentials rotated" component=discovery changed=access_key,secret_key reason=reload`) {
		t.Errorf("the discovery's rotation is not logged:\n%s", out)
	}
	for _, key := range []string{oldAccess, oldSecret, newAccess, newSecret} {
		if strings.Contains(out, key) {
			t.Errorf("the log gives %q away:\n%s", key, out)
		}
	}
}

// TestDiscoveryKeepsKeysWhileFilesAreUnreadable: a key file that is empty
// mid-rotation keeps the current keys (and says so), as for a project.
func TestDiscoveryKeepsKeysWhileFilesAreUnreadable(t *testing.T) {
	user := cloudsim.Credential{AccessKey: "u-ak", SecretKey: "u-sk", Projects: []string{"pa"}}
	srv := httptest.NewServer(cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{user}}))
	t.Cleanup(srv.Close)
	template := discoveryTemplate(srv.URL+"/v1", user)
	template.Credentials.Files = writeKeys(t, t.TempDir(), user.AccessKey, user.SecretKey)
	var logs syncbuf.Buffer
	d, err := NewDiscovery(template, "test", nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(template.Credentials.Files.SecretKey, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	found, err := d.Load(t.Context())
	if err != nil || len(found) != 1 || found[0].Credentials.SecretKey != "u-sk" {
		t.Fatalf("discovered %+v, %v; want pa with the current keys", found, err)
	}
	if !strings.Contains(logs.String(), "Cannot re-read the API credential files") {
		t.Errorf("the unreadable file is not reported:\n%s", logs.String())
	}
}
