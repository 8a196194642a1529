package projects

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
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

// TestReloaderOnRequest: the hooks run on every request to reload, also
// when there is nothing to reload (the admin surface reopens its audit log
// on them).
func TestReloaderOnRequest(t *testing.T) {
	api := collector.NewAPIMetrics(nil)
	m := New(context.Background(), slog.New(slog.DiscardHandler), api, exposition.New(exposition.SelfGatherer(api, prometheus.NewRegistry()), nil), "test")
	defer m.Stop()
	for _, file := range []string{"", "clouddb.yml"} {
		r := NewReloader(prometheus.NewRegistry(), m, func() ([]config.Project, error) { return nil, nil }, file, slog.New(slog.DiscardHandler))
		calls := 0
		r.OnRequest(func() { calls++ })
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/-/reload", nil))
		if calls != 1 {
			t.Errorf("file %q: the hook ran %d times on POST /-/reload, want 1", file, calls)
		}
	}
}
