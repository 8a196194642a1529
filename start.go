package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/common/version"

	"github.com/clouddb/clouddb_exporter/admin"
	"github.com/clouddb/clouddb_exporter/changes"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/httplimit"
	"github.com/clouddb/clouddb_exporter/logging"
	"github.com/clouddb/clouddb_exporter/projects"
	"github.com/clouddb/clouddb_exporter/shard"
)

// ok is false when run must return code now: an error, or --config.check done.
func prepare(args []string, getenv func(string) string) (f *flags, c checked, logger *slog.Logger, code int, ok bool) {
	env := &readEnv{getenv: getenv, read: map[string]bool{}}
	getenv = env.get
	f, err := parseFlags(args, getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n", exporterName, err)
		return nil, c, nil, 2, false
	}
	logger, err = logging.New(os.Stderr, f.log, logging.IsTerminal(os.Stderr))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n", exporterName, err)
		return nil, c, nil, 2, false
	}
	for _, d := range f.deprecatedEnvars {
		logger.Warn("Deprecated environment variable", "variable", d.old, "use", envarOf(d.flag))
	}
	// Every check runs first, so a failed start logs its one reason; a
	// misspelt variable, which may be that reason, is named before it.
	c, err = checkConfig(f, getenv)
	app, _ := newApp()
	for _, u := range unknownEnvars(app, os.Environ(), env.read) {
		if getenv(u.name) != "" {
			logger.Warn("Environment variable matches no flag", "variable", u.name, "nearest", u.nearest)
		}
	}
	if err != nil {
		logger.Error("Invalid configuration", "err", err)
		return nil, c, nil, 2, false
	}
	for _, w := range c.warnings {
		logger.Warn("Unsafe setting", "setting", w.Setting, "reason", w.Reason)
	}
	if f.configCheck {
		logger.Info("Configuration is valid")
		return nil, c, nil, 0, false
	}
	return f, c, logger, 0, true
}

func announce(logger *slog.Logger, f *flags, sh shard.Shard, getenv func(string) string) {
	logger.Info("Starting "+exporterName, "version", version.Info(), "build_context", version.BuildContext())
	setRuntimeLimits(logger, f.memLimit, getenv)
	if sh.Enabled() {
		logger.Info("Sharding: exporting only the services and VPCs whose id hashes to this shard", "shard", sh.Index, "total_shards", sh.Total)
	}
	if discovering(f) {
		// Polling every project the keys reach may not be what was meant.
		logger.Info("No project set: polling every project the credentials can access (project discovery)",
			"pin_one_with", "--api.project-id ("+envarOf("api.project-id")+") or --config.file")
	}
}

func newServer(f *flags, expo *exposition.Handler, manager *projects.Manager, reloader *projects.Reloader, timeline *changes.Timeline, logger *slog.Logger) *http.Server {
	r := routes{
		telemetryPath: f.telemetryPath, metrics: expo, notReady: manager.NotReady,
		reload: newLifecycle(f.enableLifecycle, reloadFunc(f, reloader), time.Now), snapshots: manager.Snapshots, pprof: f.enablePprof,
		dataPlane: func(id, part string) bool {
			p, ok := manager.Get(id)
			return ok && dataplane.Enabled(p.Config.Collect, part)
		},
	}
	if timeline != nil {
		r.changes, r.latestChanges = timeline.Handler(), timeline.Latest
	}
	mux := newMux(r)
	return httplimit.Server(&http.Server{Handler: httplimit.Handler(mux, f.maxRequests, *f.timeouts)}, *f.timeouts, logger)
}

// 0 for a clean exit, 1 when one listener fails.
func serve(ctx context.Context, logger *slog.Logger, srv *http.Server, lns *boundListeners, f *flags, adminSrv *admin.Listener) int {
	serveErr := make(chan error, 2)
	go func() { serveErr <- serveMain(srv, lns.main, f.web, f.maxConnections, logger) }()
	if adminSrv != nil {
		go func() { serveErr <- adminSrv.Serve(lns.admin, logger) }()
	}
	select {
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			logger.Error("Cannot serve", "err", err)
			return 1
		}
		return 0
	case <-ctx.Done():
	}
	logger.Info("Shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Error("Unclean shutdown", "err", err)
		return 1
	}
	if adminSrv != nil {
		if err := adminSrv.Shutdown(shutdownCtx); err != nil {
			logger.Error("Unclean shutdown of the admin listener", "err", err)
			return 1
		}
	}
	return 0
}
