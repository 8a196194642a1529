package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/shard"
)

// TestChangesFlags: the timeline is on by default and serves its feed;
// --no-changes serves no feed and no change metric; a bad flag is a
// startup error naming it.
func TestChangesFlags(t *testing.T) {
	getenv := func(string) string { return "" }
	serve := func(args ...string) (int, bool) {
		f, err := parseFlags(append([]string{"--api.url=https://api.example.net/v1"}, args...), getenv)
		if err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		expo := exposition.New(exposition.SelfGatherer(nil, reg), slog.New(slog.DiscardHandler))
		defer expo.Close()
		timeline, _, closeChanges, err := startTimeline(t.Context(), f, slog.New(slog.DiscardHandler), shard.Shard{}, reg, nil, expo)
		if err != nil {
			t.Fatal(err)
		}
		defer closeChanges()
		r := routes{telemetryPath: "/metrics", metrics: http.NotFoundHandler(), notReady: func() string { return "" }, reload: http.NotFoundHandler()}
		if timeline != nil {
			r.changes = timeline.Handler()
		}
		rec := httptest.NewRecorder()
		newMux(r).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/changes", nil))
		mfs, _ := reg.Gather()
		counted := false
		for _, mf := range mfs {
			counted = counted || strings.HasPrefix(mf.GetName(), "clouddb_exporter_changes_")
		}
		return rec.Code, counted
	}
	if code, counted := serve(); code != http.StatusOK || !counted {
		t.Errorf("by default: feed %d, metrics %v; want 200 and the change metrics", code, counted)
	}
	if code, counted := serve("--no-changes"); code != http.StatusNotFound || counted {
		t.Errorf("--no-changes: feed %d, metrics %v; want 404 and none", code, counted)
	}
	for args, want := range map[string]string{
		"--changes.retention=0s":        "--changes.retention",
		"--changes.retention.events=-1": "--changes.retention.events",
		"--changes.sink.url=ftp://x":    "--changes.sink.url",
		"--changes.sink.format=syslog":  "changes.sink.format",
		"--changes.file=" + filepath.Join(t.TempDir(), "no", "such", "dir", "f"): "--changes.file",
	} {
		f, err := parseFlags([]string{"--api.url=https://api.example.net/v1", args}, getenv)
		if err == nil {
			_, _, closeChanges, oerr := startTimeline(t.Context(), f, slog.New(slog.DiscardHandler), shard.Shard{}, prometheus.NewRegistry(), nil, nil)
			if oerr == nil {
				closeChanges()
			}
			err = oerr
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", args, err, want)
		}
	}
}
