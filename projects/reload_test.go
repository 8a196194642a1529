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

	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestReloaderRequested: a request to reload without a configuration file
// loads nothing; a file that does not load fails the reload and the
// metric; a good one is applied.
func TestReloaderRequested(t *testing.T) {
	api := apimetrics.New(nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil), "test")
	defer m.Stop()
	var loadErr error
	load := func() ([]config.Project, error) { return nil, loadErr }

	calls := 0
	noFile := NewReloader(prometheus.NewRegistry(), m, func() ([]config.Project, error) { calls++; return nil, nil }, "", slog.New(slog.DiscardHandler))
	if err := noFile.Requested(); !errors.Is(err, errNoConfigFile) || calls != 0 {
		t.Errorf("without a file: %v after %d loads, want nothing to reload and no load", err, calls)
	}

	withFile := NewReloader(prometheus.NewRegistry(), m, load, "clouddb.yml", slog.New(slog.DiscardHandler))
	loadErr = errors.New("clouddb.yml: line 2: bad")
	if err := withFile.Requested(); err == nil || !strings.Contains(err.Error(), "line 2: bad") {
		t.Errorf("a broken file: %v, want the reason", err)
	}
	if v := testutil.ToFloat64(withFile.successful); v != 0 {
		t.Errorf("clouddb_exporter_config_last_reload_successful = %v after a failed reload, want 0", v)
	}
	loadErr = nil
	if err := withFile.Requested(); err != nil {
		t.Errorf("a good file: %v", err)
	}
	if v := testutil.ToFloat64(withFile.successful); v != 1 {
		t.Errorf("clouddb_exporter_config_last_reload_successful = %v, want 1", v)
	}
}

// TestReloaderOnRequest: the hooks run on every request to reload, also
// when there is nothing to reload (the admin surface reopens its audit log
// on them).
func TestReloaderOnRequest(t *testing.T) {
	api := apimetrics.New(nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil), "test")
	defer m.Stop()
	for _, file := range []string{"", "clouddb.yml"} {
		r := NewReloader(prometheus.NewRegistry(), m, func() ([]config.Project, error) { return nil, nil }, file, slog.New(slog.DiscardHandler))
		calls := 0
		r.OnRequest(func() { calls++ })
		_ = r.Requested()
		if calls != 1 {
			t.Errorf("file %q: the hook ran %d times on POST /-/reload, want 1", file, calls)
		}
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
	api := apimetrics.New(nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, exposition.New(nil, nil), "test")
	defer m.Stop()
	p := project(srv.URL+"/v1", "p")
	p.API.MaxRetries = 0
	r := NewReloader(prometheus.NewRegistry(), m, func() ([]config.Project, error) { return []config.Project{p}, nil }, "clouddb.yml", slog.New(slog.DiscardHandler))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, 10*time.Second, "the first cycle", func() bool { return m.NotReady() == "" })
	running, _ := m.Get("p")
	running.Poller.Poll(context.Background())
	if n := services.Load(); n != 1 {
		t.Fatalf("%d services lists, want 1 (the second deferred)", n)
	}
	if err := r.Requested(); err != nil {
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
