package projects

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/syncbuf"
)

// TestDiscoveryReportsItsOwnHealth: a discovery that fails sets its own
// success series to 0 and keeps its last success time; the log says so
// once per streak, says when it recovers, and says which projects were
// added or removed when the list changes, never every cycle.
func TestDiscoveryReportsItsOwnHealth(t *testing.T) {
	user := cloudsim.Credential{AccessKey: "u-ak", SecretKey: "u-sk", Projects: []string{"pa", "pb"}}
	sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{user}})
	var failing atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() && strings.HasSuffix(r.URL.Path, "/projects") {
			http.Error(w, `{"code":"INTERNAL_ERROR","message":"down"}`, http.StatusInternalServerError)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	template := discoveryTemplate(srv.URL+"/v1", user)
	var logs syncbuf.Buffer
	d, err := NewDiscovery(template, "test", nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	d.Metrics = NewDiscoveryMetrics(reg)
	now := time.Unix(1_700_000_000, 0)
	d.now = func() time.Time { return now }

	load := func(wantErr bool) {
		t.Helper()
		now = now.Add(time.Minute)
		if _, err := d.Load(t.Context()); (err != nil) != wantErr {
			t.Fatalf("Load: %v, want an error: %v", err, wantErr)
		}
	}
	for range 3 {
		load(false)
	}
	okAt := float64(now.Unix())
	failing.Store(true)
	for range 3 {
		load(true)
	}
	if v := testutil.ToFloat64(d.Metrics.success); v != 0 {
		t.Errorf("clouddb_exporter_discovery_success = %v while GET /projects fails, want 0", v)
	}
	if v := testutil.ToFloat64(d.Metrics.lastSuccess); v != okAt {
		t.Errorf("clouddb_exporter_discovery_last_success_timestamp_seconds = %v, want %v", v, okAt)
	}
	failing.Store(false)
	sim.AddProject("pc")
	load(false)
	load(false)
	if v := testutil.ToFloat64(d.Metrics.success); v != 1 {
		t.Errorf("clouddb_exporter_discovery_success = %v after recovery, want 1", v)
	}

	out := logs.String()
	for line, want := range map[string]int{
		`msg="Projects discovered" projects=2 added="[pa pb]" removed=[]`: 1,
		`msg="Project discovery failed`:                                   1,
		`msg="Project discovery recovered" projects=3`:                    1,
		`msg="Projects discovered" projects=3 added=[pc] removed=[]`:      1,
	} {
		if n := strings.Count(out, line); n != want {
			t.Errorf("%d lines %s, want %d:\n%s", n, line, want, out)
		}
	}
	if n := strings.Count(out, "level="); n != 4 {
		t.Errorf("%d log lines over 8 discoveries, want 4 (the changes):\n%s", n, out)
	}
}

// TestReloaderKeepsDiscoveryFailuresApart: a failed project discovery is
// no configuration error (the reload metric stays 1: there is no file),
// and the periodic rediscovery does not log "Configuration applied" every
// cycle.
func TestReloaderKeepsDiscoveryFailuresApart(t *testing.T) {
	api := apimetrics.New(nil)
	m := New(t.Context(), slog.New(slog.DiscardHandler), api, exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil), "test")
	defer m.Stop()
	var loadErr error
	load := func() ([]config.Project, error) { return nil, loadErr }
	var logs syncbuf.Buffer
	r := NewReloader(prometheus.NewRegistry(), m, load, "project discovery", slog.New(slog.NewTextHandler(&logs, nil)))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := r.Rediscover(); err != nil {
			t.Fatal(err)
		}
	}
	loadErr = &discoveryError{errors.New("project discovery: 500")}
	if err := r.Rediscover(); err == nil {
		t.Error("a failed discovery reloaded without an error")
	}
	if v := testutil.ToFloat64(r.successful); v != 1 {
		t.Errorf("clouddb_exporter_config_last_reload_successful = %v after a failed discovery, want 1", v)
	}
	out := logs.String()
	if n := strings.Count(out, "Configuration applied"); n != 1 {
		t.Errorf("%d lines Configuration applied over a start and 3 rediscoveries, want 1:\n%s", n, out)
	}
	if strings.Contains(out, "Configuration not applied") {
		t.Errorf("a failed discovery is logged as a configuration error:\n%s", out)
	}
}
