package projects

import (
	"context"
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

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestReloaderServeHTTP covers POST /-/reload: refused without a
// configuration file, refused with the reason when the file does not load
// (the failure is reported by the metric), applied otherwise.
func TestReloaderServeHTTP(t *testing.T) {
	api := collector.NewAPIMetrics(nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil), "test")
	defer m.Stop()
	var loadErr error
	load := func() ([]config.Project, error) { return nil, loadErr }
	reload := func(r *Reloader) (int, string) {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/-/reload", nil))
		return rec.Code, rec.Body.String()
	}

	calls := 0
	noFile := NewReloader(prometheus.NewRegistry(), m, func() ([]config.Project, error) { calls++; return nil, nil }, "", slog.New(slog.DiscardHandler))
	if code, body := reload(noFile); code != http.StatusBadRequest || !strings.Contains(body, "Nothing to reload") || calls != 0 {
		t.Errorf("without a file: %d %q after %d loads, want 400 and no load", code, body, calls)
	}

	reg := prometheus.NewRegistry()
	withFile := NewReloader(reg, m, load, "clouddb.yml", slog.New(slog.DiscardHandler))
	loadErr = errors.New("clouddb.yml: line 2: bad")
	if code, body := reload(withFile); code != http.StatusBadRequest || !strings.Contains(body, "line 2: bad") {
		t.Errorf("a broken file: %d %q, want 400 with the reason", code, body)
	}
	if v := testutil.ToFloat64(withFile.successful); v != 0 {
		t.Errorf("clouddb_exporter_config_last_reload_successful = %v after a failed reload, want 0", v)
	}
	loadErr = nil
	if code, body := reload(withFile); code != http.StatusOK || !strings.Contains(body, "Reloaded") {
		t.Errorf("a good file: %d %q, want 200", code, body)
	}
	if v := testutil.ToFloat64(withFile.successful); v != 1 {
		t.Errorf("clouddb_exporter_config_last_reload_successful = %v, want 1", v)
	}
}

// TestOperatorReloadClearsDeferrals: a project kept running by an
// operator's reload calls again at once what a Retry-After deferred.
func TestOperatorReloadClearsDeferrals(t *testing.T) {
	var services atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/services") {
			services.Add(1)
			w.Header().Set("Retry-After", "Thu, 01 Jan 2099 00:00:00 GMT")
			http.Error(w, `{"code":"RATE_LIMITED"}`, http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte("[]"))
	}))
	defer srv.Close()
	api := collector.NewAPIMetrics(nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, exposition.New(nil, nil), "test")
	defer m.Stop()
	p := project(srv.URL+"/v1", "p")
	p.API.MaxRetries = 0
	r := NewReloader(prometheus.NewRegistry(), m, func() ([]config.Project, error) { return []config.Project{p}, nil }, "clouddb.yml", slog.New(slog.DiscardHandler))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, 10*time.Second, "the first cycle", m.Ready)
	running, _ := m.Get("p")
	running.Poller.Poll(context.Background())
	if n := services.Load(); n != 1 {
		t.Fatalf("%d services lists, want 1 (the second deferred)", n)
	}
	if err := r.reloadRequested(); err != nil {
		t.Fatal(err)
	}
	if kept, _ := m.Get("p"); kept != running {
		t.Fatal("the reload restarted the project")
	}
	running.Poller.Poll(context.Background())
	if n := services.Load(); n != 2 {
		t.Errorf("%d services lists after the reload, want 2", n)
	}
}
