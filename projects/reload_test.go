package projects

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
)

// TestReloaderRequested: a request to reload without a configuration file
// loads nothing; a file that does not load fails the reload and the
// metric; a good one is applied.
func TestReloaderRequested(t *testing.T) {
	api := collector.NewAPIMetrics(nil)
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
	api := collector.NewAPIMetrics(nil)
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
