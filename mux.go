package main

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/clouddb/clouddb_exporter/changes"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/sd"
)

type routes struct {
	telemetryPath string
	metrics       http.Handler
	// Why the exporter is not ready, "" when it is.
	notReady  func() string
	reload    http.Handler
	snapshots func() []*fleet.Snapshot
	dataPlane func(projectID, part string) bool
	pprof     bool
	// changes is the change feed, nil with --no-changes; latestChanges
	// gives the status page a project's latest.
	changes       http.Handler
	latestChanges func(projectID string, n int) []changes.Event
}

// The status page links only to the pages served.
func newMux(r routes) *http.ServeMux {
	mux := http.NewServeMux()
	links := []web.LandingLinks{{Address: r.telemetryPath, Text: "Metrics"}}
	mux.Handle("GET "+r.telemetryPath, r.metrics)
	for _, s := range []struct{ path, kind, text string }{
		{"/sd/services", sd.KindServices, "Service discovery: services"},
		{"/sd/replica-sets", sd.KindReplicaSets, "Service discovery: replica sets"},
		{"/sd/poolers", sd.KindPoolers, "Service discovery: connection poolers"},
	} {
		mux.Handle("GET "+s.path, sd.Handler(s.kind, r.snapshots))
		links = append(links, web.LandingLinks{Address: s.path, Text: s.text})
	}
	if r.changes != nil {
		mux.Handle("GET /api/v1/changes", r.changes)
		links = append(links, web.LandingLinks{Address: "/api/v1/changes", Text: "Changes (NDJSON)"})
	}
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "Healthy")
	})
	mux.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if why := r.notReady(); why != "" {
			http.Error(w, "Not ready: "+why, http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "Ready")
	})
	links = append(links, web.LandingLinks{Address: "/-/healthy", Text: "Health"}, web.LandingLinks{Address: "/-/ready", Text: "Readiness"})
	mux.Handle("POST /-/reload", r.reload)
	if r.pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		links = append(links, web.LandingLinks{Address: "/debug/pprof/", Text: "Profiling (pprof)"})
	}
	if r.telemetryPath != "/" {
		mux.Handle("GET /{$}", newStatusPage(statusPage{snapshots: r.snapshots, notReady: r.notReady, links: links, now: time.Now, dataPlane: r.dataPlane, changes: r.latestChanges}))
	}
	return mux
}
