// Command clouddb_exporter exports the state of a managed cloud-database
// fleet (services, replica sets, VPCs, peerings, credentials) to Prometheus.
// A background poller reads the provider's API; scrapes only read the last
// snapshot, so API cost depends on the fleet and the poll interval, never on
// how often /metrics is scraped.
package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"slices"
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
	"github.com/clouddb/clouddb_exporter/internal/flagval"
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
	adminFlags := addAdminFlags(app)
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
	adminSrv, adminCleanup, err := newAdminServer(ctx, adminFlags, *simulate, manager, reg, logger, os.Stdout)
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
		go func() { serveErr <- adminSrv.serve(logger) }()
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
			if err := adminSrv.srv.Shutdown(shutdownCtx); err != nil {
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

// adminFlags are the flags of the admin surface.
type adminFlags struct {
	listen, webConfig, tokenFile, auditLog string
	allow                                  []string
	operationTimeout                       time.Duration
}

func addAdminFlags(app *kingpin.Application) *adminFlags {
	f := &adminFlags{}
	app.Flag("admin.listen-address", "Address of the admin surface's listener (write operations; see the README). Empty disables it.").
		Envar("CLOUDDB_ADMIN_LISTEN_ADDRESS").StringVar(&f.listen)
	app.Flag("admin.web-config.file", "TLS and basic-auth configuration of the admin listener (exporter-toolkit format, bcrypt hashes).").
		Envar("CLOUDDB_ADMIN_WEB_CONFIG_FILE").StringVar(&f.webConfig)
	app.Flag("admin.token-file", "File with the bearer token of the admin surface; alternative to basic_auth_users.").
		Envar("CLOUDDB_ADMIN_TOKEN_FILE").StringVar(&f.tokenFile)
	app.Flag("admin.allow", "Write operation the admin surface permits (repeatable, e.g. resizeService). Default: every write operation except deleteService, deleteReplicaSet, deleteVPC, deletePeering and updatePassword.").
		StringsVar(&f.allow)
	app.Flag("admin.audit-log", "File the admin surface appends one JSON audit record per request to (created 0600), besides the log.").
		Envar("CLOUDDB_ADMIN_AUDIT_LOG").StringVar(&f.auditLog)
	flagval.Duration(app, "admin.operation-timeout", "How long an asynchronous admin operation is tracked before it counts as timed out.",
		admin.DefaultOperationTimeout.String(), "CLOUDDB_ADMIN_OPERATION_TIMEOUT", &f.operationTimeout)
	return f
}

// adminServer is the admin surface's listener.
type adminServer struct {
	srv       *http.Server
	listen    string
	webConfig string
}

func (a *adminServer) serve(logger *slog.Logger) error {
	systemd := false
	err := web.ListenAndServe(a.srv, &web.FlagConfig{
		WebListenAddresses: &[]string{a.listen},
		WebSystemdSocket:   &systemd,
		WebConfigFile:      &a.webConfig,
	}, logger.With("listener", "admin"))
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("admin listener: %w", err)
	}
	return err
}

// newAdminServer checks the admin flags and builds the admin surface, or
// returns nil when --admin.listen-address is empty. Starting it without
// authentication is refused, except for --simulate on loopback, where a
// token is generated and printed once to stdout (not to the log).
func newAdminServer(ctx context.Context, f *adminFlags, simulate bool, manager *projects.Manager, reg prometheus.Registerer, logger *slog.Logger, stdout io.Writer) (*adminServer, func(), error) {
	nop := func() {}
	if f.listen == "" {
		for flag, v := range map[string]string{"--admin.web-config.file": f.webConfig, "--admin.token-file": f.tokenFile, "--admin.audit-log": f.auditLog} {
			if v != "" {
				return nil, nop, fmt.Errorf("%s is set but --admin.listen-address is empty: set both or neither", flag)
			}
		}
		if len(f.allow) > 0 {
			return nil, nop, errors.New("--admin.allow is set but --admin.listen-address is empty: set both or neither")
		}
		return nil, nop, nil
	}
	allow := f.allow
	if len(allow) == 0 {
		allow = admin.DefaultAllow()
	}
	if err := admin.CheckAllow("--admin.allow", allow); err != nil {
		return nil, nop, err
	}
	opts := admin.Options{
		Projects: func(id string) (admin.Project, bool) {
			p, ok := manager.Get(id)
			if !ok {
				return admin.Project{}, false
			}
			return admin.Project{Client: p.Client, Poller: p.Poller, TrackInterval: p.Config.Collect.TransitionInterval}, true
		},
		Allow:            allow,
		OperationTimeout: f.operationTimeout,
		Registerer:       reg,
		Logger:           logger,
	}
	if f.operationTimeout <= 0 {
		return nil, nop, errors.New("--admin.operation-timeout (CLOUDDB_ADMIN_OPERATION_TIMEOUT) must be positive")
	}
	cleanups := []func(){}
	cleanup := func() {
		for _, c := range slices.Backward(cleanups) {
			c()
		}
	}
	fail := func(err error) (*adminServer, func(), error) {
		cleanup()
		return nil, nop, err
	}
	serveConfig := ""
	if f.webConfig != "" {
		if err := web.Validate(f.webConfig); err != nil {
			return fail(fmt.Errorf("--admin.web-config.file (CLOUDDB_ADMIN_WEB_CONFIG_FILE): %w", err))
		}
		wc, err := admin.LoadWebConfig(f.webConfig)
		if err != nil {
			return fail(fmt.Errorf("--admin.web-config.file (CLOUDDB_ADMIN_WEB_CONFIG_FILE): %w", err))
		}
		cleanups = append(cleanups, wc.Close)
		opts.BasicAuthUsers, serveConfig = wc.Users, wc.ServeFile
	}
	if f.tokenFile != "" {
		raw, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return fail(fmt.Errorf("--admin.token-file (CLOUDDB_ADMIN_TOKEN_FILE): %w", err))
		}
		opts.Token = strings.TrimSpace(string(raw))
		if opts.Token == "" {
			return fail(errors.New("--admin.token-file (CLOUDDB_ADMIN_TOKEN_FILE): the file is empty"))
		}
	}
	switch {
	case opts.Token != "" && len(opts.BasicAuthUsers) > 0:
		return fail(errors.New("--admin.token-file and basic_auth_users in --admin.web-config.file both use the Authorization header: configure one"))
	case opts.Token == "" && len(opts.BasicAuthUsers) == 0 && simulate && isLoopback(f.listen):
		opts.Token = rand.Text()
		fmt.Fprintf(stdout, "Admin token for this --simulate run (shown once): %s\n", opts.Token)
	case opts.Token == "" && len(opts.BasicAuthUsers) == 0:
		return fail(errors.New("--admin.listen-address needs authentication: set --admin.token-file or basic_auth_users in --admin.web-config.file"))
	}
	if f.auditLog != "" {
		file, err := os.OpenFile(f.auditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fail(fmt.Errorf("--admin.audit-log (CLOUDDB_ADMIN_AUDIT_LOG): %w", err))
		}
		cleanups = append(cleanups, func() { _ = file.Close() })
		opts.AuditLog = file
	}
	handler, err := admin.New(ctx, opts)
	if err != nil {
		return fail(err)
	}
	logger.Info("Admin surface enabled", "address", f.listen, "allow", strings.Join(allow, ","),
		"basic_auth", len(opts.BasicAuthUsers) > 0, "audit_log", f.auditLog)
	return &adminServer{
		srv:       &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second},
		listen:    f.listen,
		webConfig: serveConfig,
	}, cleanup, nil
}

// isLoopback reports whether a listen address only accepts local
// connections.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
