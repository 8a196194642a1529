// Command clouddb_exporter exports the state of a managed cloud-database
// fleet (services, replica sets, VPCs, peerings, credentials) to Prometheus.
// A background poller reads the provider's API; scrapes only read the last
// snapshot, so API cost depends on the fleet and the poll interval, never on
// how often /metrics is scraped.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/clouddb/clouddb_exporter/admin"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/logging"
	"github.com/clouddb/clouddb_exporter/projects"
	"github.com/clouddb/clouddb_exporter/sd"
)

const exporterName = "clouddb_exporter"

// versionFile is the release version; builds with ldflags (make build, the
// Dockerfile) also set the revision, branch and build date.
//
//go:embed VERSION
var versionFile string

func main() { os.Exit(run(os.Args[1:], os.Getenv)) }

func run(args []string, getenv func(string) string) int {
	if version.Version == "" {
		version.Version = strings.TrimSpace(versionFile)
	}
	app := kingpin.New(exporterName, "Prometheus exporter for a managed cloud-database control plane.")
	webFlags := kingpinflag.AddFlags(app, ":9866")
	telemetryPath := app.Flag("web.telemetry-path", "Path under which to expose metrics.").
		Default("/metrics").Envar("CLOUDDB_WEB_TELEMETRY_PATH").String()
	logFlags := logging.AddFlags(app)
	cfgFlags := config.AddFlags(app)
	simulate := app.Flag("simulate", "Start the embedded API simulator (demo scenario) on loopback and poll it: a complete demo with no cloud account.").
		Envar("CLOUDDB_SIMULATE").Bool()
	adminFlags := admin.AddFlags(app)
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')
	if _, err := app.Parse(args); err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n", exporterName, err)
		return 2
	}

	logger, err := logging.New(os.Stderr, logFlags, logging.IsTerminal(os.Stderr))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n", exporterName, err)
		return 2
	}
	logger.Info("Starting "+exporterName, "version", version.Info(), "build_context", version.BuildContext())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	load, err := projectSource(ctx, logger, cfgFlags, *simulate, getenv)
	if err != nil {
		logger.Error("Invalid configuration", "err", err)
		return 2
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		versioncollector.NewCollector(exporterName),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// The API metrics stay out of reg: through SelfGatherer the exposition
	// re-encodes them only after an API call, not on every scrape.
	apiMetrics := collector.NewAPIMetrics(nil)
	exposition := collector.NewExposition(collector.SelfGatherer(apiMetrics, reg), logger)
	manager := projects.New(ctx, logger, apiMetrics, exposition, version.ComponentUserAgent(exporterName))
	defer manager.Stop()
	reloader := projects.NewReloader(reg, manager, load, logger)
	if err := reloader.Reload(); err != nil {
		return 2
	}
	adminSrv, adminCleanup, err := adminFlags.Listener(ctx, admin.Options{
		Projects: func(id string) (admin.Project, bool) {
			p, ok := manager.Get(id)
			if !ok {
				return admin.Project{}, false
			}
			return admin.Project{Client: p.Client, Poller: p.Poller, TrackInterval: p.Config.Collect.TransitionInterval}, true
		},
		Registerer: reg,
		Logger:     logger,
	}, *simulate, os.Stdout)
	if err != nil {
		logger.Error("Invalid admin configuration", "err", err)
		return 2
	}
	defer adminCleanup()

	mux := http.NewServeMux()
	mux.Handle("GET "+*telemetryPath, exposition)
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "Healthy")
	})
	mux.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !manager.Ready() {
			http.Error(w, "Not ready: the first poll cycle has not finished", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "Ready")
	})
	mux.HandleFunc("POST /-/reload", func(w http.ResponseWriter, _ *http.Request) {
		if cfgFlags.ConfigFile == "" {
			http.Error(w, "Nothing to reload: no --config.file given", http.StatusBadRequest)
			return
		}
		if err := reloader.Reload(); err != nil {
			http.Error(w, "Configuration not applied: "+err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = fmt.Fprintln(w, "Reloaded")
	})
	for path, kind := range map[string]string{
		"/sd/services": sd.KindServices, "/sd/replica-sets": sd.KindReplicaSets, "/sd/poolers": sd.KindPoolers,
	} {
		mux.Handle("GET "+path, sd.Handler(kind, manager.Snapshots))
	}
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "CloudDB Exporter",
		Description: "Prometheus exporter for a managed cloud-database control plane",
		Version:     version.Info(),
		Links: []web.LandingLinks{
			{Address: *telemetryPath, Text: "Metrics"},
			{Address: "/sd/services", Text: "Service discovery: services"},
			{Address: "/sd/replica-sets", Text: "Service discovery: replica sets"},
			{Address: "/sd/poolers", Text: "Service discovery: connection poolers"},
			{Address: "/-/healthy", Text: "Health"},
			{Address: "/-/ready", Text: "Readiness"},
		},
	})
	if err != nil {
		logger.Error("Cannot build the landing page", "err", err)
		return 1
	}
	if *telemetryPath != "/" {
		mux.Handle("GET /{$}", landing)
	}

	go func() {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if cfgFlags.ConfigFile == "" {
					logger.Info("Ignoring SIGHUP: no --config.file given")
					continue
				}
				_ = reloader.Reload()
			}
		}
	}()

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 2)
	go func() { serveErr <- web.ListenAndServe(srv, webFlags, logger) }()
	if adminSrv != nil {
		go func() { serveErr <- adminSrv.Serve(logger) }()
	}

	select {
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			logger.Error("Cannot serve", "err", err)
			return 1
		}
	case <-ctx.Done():
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
	}
	return 0
}

// projectSource resolves where the projects come from, failing fast on
// missing or contradictory settings: the embedded simulator, a
// configuration file (re-read on reload), or the single-project flags.
func projectSource(ctx context.Context, logger *slog.Logger, f *config.Flags, simulate bool, getenv func(string) string) (func() ([]config.Project, error), error) {
	switch {
	case simulate && f.ConfigFile != "":
		return nil, errors.New("--simulate and --config.file (CLOUDDB_CONFIG_FILE) contradict each other: use one")
	case simulate:
		if given := f.SingleProjectSettingsGiven(getenv, true); len(given) > 0 {
			return nil, fmt.Errorf("--simulate polls its own simulator with generated credentials; unset %s", strings.Join(given, ", "))
		}
		project, err := startSimulator(ctx, logger, f)
		if err != nil {
			return nil, err
		}
		return func() ([]config.Project, error) { return []config.Project{project}, nil }, nil
	case f.ConfigFile != "":
		if given := f.SingleProjectSettingsGiven(getenv, false); len(given) > 0 {
			return nil, fmt.Errorf("--config.file (CLOUDDB_CONFIG_FILE) lists the projects and their credentials; unset %s", strings.Join(given, ", "))
		}
		api, collect := f.Defaults()
		load := func() ([]config.Project, error) { return config.LoadFile(f.ConfigFile, api, collect, getenv) }
		_, err := load()
		return load, err
	default:
		project, err := f.SingleProject(getenv)
		if err != nil {
			return nil, err
		}
		return func() ([]config.Project, error) { return []config.Project{project}, nil }, nil
	}
}
