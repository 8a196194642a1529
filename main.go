// Command clouddb_exporter exports a managed cloud-database fleet to
// Prometheus; scrapes read the background poller's last snapshot.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
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
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/changes"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/exposition"
	"github.com/clouddb/clouddb_exporter/internal/flagval"
	"github.com/clouddb/clouddb_exporter/internal/httplimit"
	"github.com/clouddb/clouddb_exporter/logging"
	"github.com/clouddb/clouddb_exporter/projects"
	"github.com/clouddb/clouddb_exporter/rightsizing"
	"github.com/clouddb/clouddb_exporter/shard"
)

const exporterName = "clouddb_exporter"

// Builds with ldflags also set the revision, branch and build date.
//
//go:embed VERSION
var versionFile string

func main() { os.Exit(run(os.Args[1:], os.Getenv)) }

// run returns 0 after a clean shutdown, 1 when serving fails and 2 for a
// configuration error.
func run(args []string, getenv func(string) string) int {
	if version.Version == "" {
		version.Version = strings.TrimSpace(versionFile)
	}
	f, c, logger, code, ok := prepare(args, getenv)
	if !ok {
		return code
	}
	sh := c.shard
	// Bound before anything starts, so that a taken port is the one line a
	// failed start prints.
	lns, err := bindListeners(f, logger)
	if err != nil {
		logger.Error("Cannot listen", "err", err)
		return 2
	}
	defer lns.close()
	announce(logger, f, sh, getenv)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// The API metrics stay out of reg: through SelfGatherer the exposition
	// serves them and reg's Go and process metrics from caches.
	apiMetrics := apimetrics.New(nil)
	reg := newRegistry(!f.disableExporterMetrics)
	load, err := projectSource(ctx, logger, f, getenv, c.projects, apiMetrics, reg)
	if err != nil {
		logger.Error("Invalid configuration", "err", err)
		return 2
	}

	expo := exposition.New(exposition.SelfGatherer(apiMetrics, reg), logger)
	defer expo.Close()
	pipe, err := startPipeline(ctx, f, c, logger, sh, reg, expo, load)
	if err != nil {
		logger.Error("Invalid configuration", "err", err)
		return 2
	}
	defer pipe.close()
	manager := newManager(ctx, f, logger, apiMetrics, pipe, sh)
	defer manager.Stop()
	reloader := projects.NewReloader(reg, manager, pipe.load, reloadSource(f), logger)

	// Built before the first load starts the pollers.
	adminOpts := adminOptions(manager, reg, logger)
	adminOpts.Writes = writesOf(pipe.timeline)
	adminOpts.MaxRequests = f.maxRequests
	adminOpts.Timeouts = *f.timeouts
	adminSrv, adminCleanup, err := f.admin.Listener(ctx, adminOpts, f.simulate, os.Stdout)
	if err != nil {
		logger.Error("Invalid admin configuration", "err", err)
		return 2
	}
	defer adminCleanup()
	if adminSrv != nil {
		reloader.OnRequest(adminSrv.Reopen)
	}
	srv := newServer(f, expo, manager, reloader, pipe.timeline, logger)

	if err := reloader.Reload(); err != nil {
		return 2
	}
	go reloader.WatchSIGHUP(ctx)
	if discovering(f) {
		_, collect := f.config.Defaults()
		go rediscover(ctx, reloader, collect.Interval)
	}
	go manager.WatchCredentials(ctx)
	return serve(ctx, logger, srv, lns, f, adminSrv)
}

type flags struct {
	web                     *web.FlagConfig
	telemetryPath           string
	maxRequests             int
	maxConnections          int
	maxConnectionsFlag      string
	timeouts                *httplimit.Timeouts // hidden, for tests
	disableExporterMetrics  bool
	enablePprof             bool
	enableLifecycle         bool
	log                     *logging.Config
	config                  *config.Flags
	configCheck             bool
	simulate                bool
	simulateAddress         string
	simulateAddressSet      bool // on the command line; see checkProjects for the environment
	pricingFile             string
	stateFile               string
	rightsizing             rightsizingFlags
	admin                   *admin.Flags
	shard                   *shard.Flags
	changes                 *changes.Flags
	memLimit                *memLimitFlags
	credentialCheckInterval time.Duration
	euid                    int // the process's, for the warning about root
	deprecatedEnvars        []deprecatedEnvar
}

// docs/configuration.md's flags table is tested against newApp.
func newApp() (*kingpin.Application, *flags) {
	app := kingpin.New(exporterName, "Prometheus exporter for a managed cloud-database control plane.")
	f := &flags{web: kingpinflag.AddFlags(app, ":9866")}
	addToolkitEnvars(app)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").
		Default("/metrics").Envar("CLOUDDB_WEB_TELEMETRY_PATH").StringVar(&f.telemetryPath)
	flagval.Int(app, "web.max-requests", "Requests served at once on each listener, 503 beyond (0: no limit).",
		"40", "CLOUDDB_WEB_MAX_REQUESTS", &f.maxRequests)
	app.Flag("web.max-connections", "Connections open at once per listen address (auto: by RLIMIT_NOFILE).").
		Default("auto").Envar("CLOUDDB_WEB_MAX_CONNECTIONS").StringVar(&f.maxConnectionsFlag)
	f.timeouts = httplimit.AddFlags(app)
	app.Flag("web.disable-exporter-metrics", "Leave the exporter's go_* and process_* metrics out of /metrics.").
		Envar("CLOUDDB_WEB_DISABLE_EXPORTER_METRICS").BoolVar(&f.disableExporterMetrics)
	app.Flag("web.enable-pprof", "Serve the Go profiler under /debug/pprof/.").
		Envar("CLOUDDB_WEB_ENABLE_PPROF").BoolVar(&f.enablePprof)
	app.Flag("web.enable-lifecycle", "Serve POST /-/reload (SIGHUP reloads either way).").
		Envar("CLOUDDB_WEB_ENABLE_LIFECYCLE").BoolVar(&f.enableLifecycle)
	f.log = logging.AddFlags(app)
	f.config = config.AddFlags(app)
	app.Flag("config.check", "Check the configuration and exit: 0 when it is valid, 2 otherwise.").
		Envar("CLOUDDB_CONFIG_CHECK").BoolVar(&f.configCheck)
	app.Flag("simulate", "Poll an embedded API simulator: a demo with no cloud account.").
		Envar("CLOUDDB_SIMULATE").BoolVar(&f.simulate)
	app.Flag("simulate.listen-address", "Loopback address of the embedded simulator (--simulate).").
		Default(cloudsim.DemoAddress).Envar("CLOUDDB_SIMULATE_LISTEN_ADDRESS").IsSetByUser(&f.simulateAddressSet).StringVar(&f.simulateAddress)
	addPricingFlags(app, f)
	addStateFileFlag(app, f)
	f.admin = admin.AddFlags(app)
	f.shard = shard.AddFlags(app)
	f.changes = changes.AddFlags(app)
	f.memLimit = addMemLimitFlags(app)
	// Hidden: whole-binary tests rotate keys many times in a row, and a 401
	// re-reads the files at once anyway.
	flagval.Duration(app, "api.credentials-check-interval", "How often the credential files are re-read to pick up rotated keys.",
		projects.DefaultCredentialCheckInterval.String(), "CLOUDDB_API_CREDENTIALS_CHECK_INTERVAL", &f.credentialCheckInterval)
	app.GetFlag("api.credentials-check-interval").Hidden()
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')
	setUsage(app)
	return app, f
}

func parseFlags(args []string, getenv func(string) string) (*flags, error) {
	app, f := newApp()
	f.euid = os.Geteuid()
	f.deprecatedEnvars = applyDeprecatedEnvars(app, getenv)
	args, err := boolArgs(app, args, getenv)
	if err != nil {
		return f, err
	}
	if _, err := app.Parse(args); err != nil {
		return f, err
	}
	if f.maxRequests < 0 {
		return f, errors.New("--web.max-requests (CLOUDDB_WEB_MAX_REQUESTS) must not be negative")
	}
	if f.maxConnections, err = httplimit.MaxConnections("--web.max-connections (CLOUDDB_WEB_MAX_CONNECTIONS)", f.maxConnectionsFlag, httplimit.MainConnectionsShare, httplimit.MainConnectionsCap); err != nil {
		return f, err
	}
	if err := f.memLimit.check(); err != nil {
		return f, err
	}
	if f.credentialCheckInterval <= 0 {
		return f, errors.New("--api.credentials-check-interval must be positive")
	}
	if err := f.timeouts.Check(); err != nil {
		return f, err
	}
	if err := f.changes.Check(); err != nil {
		return f, err
	}
	return f, nil
}

// The admin surface tracks an operation through this process's poller,
// which, sharded, does not poll the other shards' services: it would report
// their operations as failed, so sharding and admin do not go together.
func shardOf(f *flags) (shard.Shard, error) {
	sh, err := f.shard.Shard(os.Hostname)
	if err == nil && sh.Enabled() && f.admin.Enabled() {
		err = errors.New("--admin.listen-address cannot be used with --total-shards above 1: an admin operation is tracked through the process's own poller, which does not poll the other shards' services; run the admin surface on an unsharded exporter")
	}
	return sh, err
}

// checked is what checkConfig found, which the start runs.
type checked struct {
	// projects are those read from the file or the flags; nil with --simulate and discovery.
	projects []config.Project
	shard    shard.Shard
	warnings []flagval.Warning
	// rightsizing is the checked --rightsizing.* flags.
	rightsizing rightsizing.Config
}

// checkConfig is --config.check and the first thing a start does: every
// check, nothing written (the audit log is checked, not created).
func checkConfig(f *flags, getenv func(string) string) (checked, error) {
	var c checked
	var err error
	if c.projects, err = checkProjects(f, getenv); err != nil {
		return c, err
	}
	if c.shard, err = shardOf(f); err != nil {
		return c, err
	}
	if _, err := loadPrices(f); err != nil {
		return c, err
	}
	if c.rightsizing, err = rightsizingConfig(f, getenv); err != nil {
		return c, err
	}
	c.rightsizing.ReadLag = rightsizingReadLag(f, c.projects, getenv)
	if err := checkRightsizingSeries(f, c.projects, getenv); err != nil {
		return c, err
	}
	if err := checkStateFile(f); err != nil {
		return c, err
	}
	if *f.web.WebConfigFile != "" {
		if err := web.Validate(*f.web.WebConfigFile); err != nil {
			return c, fmt.Errorf("--web.config.file: %w", err)
		}
	}
	if err := f.admin.Check(context.Background(), adminOptions(nil, prometheus.NewRegistry(), slog.New(slog.DiscardHandler)), f.simulate); err != nil {
		return c, err
	}
	if !f.simulate {
		c.warnings = f.config.Warnings(getenv, c.projects)
	}
	c.warnings = append(c.warnings, f.admin.Warnings()...)
	c.warnings = append(c.warnings, mainWarnings(f, f.euid)...)
	return c, nil
}

// checkProjects checks where the projects come from (the embedded simulator, a
// configuration file, the single-project flags, or discovery) and reads them from a
// file or the flags: nil for the simulator's and discovery's, known once started.
func checkProjects(f *flags, getenv func(string) string) ([]config.Project, error) {
	cfg := f.config
	switch {
	case !f.simulate && (f.simulateAddressSet || getenv("CLOUDDB_SIMULATE_LISTEN_ADDRESS") != ""):
		return nil, errors.New("--simulate.listen-address (CLOUDDB_SIMULATE_LISTEN_ADDRESS) is set but --simulate is not: set both or neither")
	case f.simulate && cfg.ConfigFile != "":
		return nil, errors.New("--simulate and --config.file (CLOUDDB_CONFIG_FILE) contradict each other: use one")
	case f.simulate:
		if given := cfg.SingleProjectSettingsGiven(getenv, true); len(given) > 0 {
			return nil, fmt.Errorf("--simulate polls its own simulator with generated credentials; unset %s", strings.Join(given, ", "))
		}
		if err := cloudsim.CheckDemoAddress(f.simulateAddress); err != nil {
			return nil, fmt.Errorf("--simulate.listen-address (CLOUDDB_SIMULATE_LISTEN_ADDRESS): %w", err)
		}
		return nil, nil
	case cfg.ConfigFile != "":
		if given := cfg.SingleProjectSettingsGiven(getenv, false); len(given) > 0 {
			return nil, fmt.Errorf("--config.file (CLOUDDB_CONFIG_FILE) lists the projects and their credentials; unset %s", strings.Join(given, ", "))
		}
		return loadProjects(f, getenv)
	case cfg.ProjectID == "":
		_, err := cfg.DiscoveryTemplate(getenv)
		return nil, err
	default:
		return loadProjects(f, getenv)
	}
}

// loadProjects reads the projects of a configuration file or the single-project flags.
func loadProjects(f *flags, getenv func(string) string) ([]config.Project, error) {
	cfg := f.config
	if cfg.ConfigFile != "" {
		api, collect := cfg.Defaults()
		return config.LoadFile(cfg.ConfigFile, api, collect, getenv)
	}
	project, err := cfg.SingleProject(getenv)
	return []config.Project{project}, err
}

// shardName names this process's shard in the change state file.
func shardName(sh shard.Shard) string {
	if !sh.Enabled() {
		return ""
	}
	return fmt.Sprintf("%d/%d", sh.Index, sh.Total)
}

func newManager(ctx context.Context, f *flags, logger *slog.Logger, apiMetrics *apimetrics.Metrics, pipe *pipeline, sh shard.Shard) *projects.Manager {
	manager := projects.New(ctx, logger, apiMetrics, pipe.publish, version.ComponentUserAgent(exporterName))
	manager.Shard = sh
	manager.LogPositions = pipe.positions
	manager.UsageObserver = pipe.observer
	manager.CredentialCheckInterval = f.credentialCheckInterval
	if pipe.timeline != nil {
		manager.OnApply = pipe.timeline.SetProjects
		manager.OnLogEntries = pipe.timeline.ObserveLogEntries
	}
	return manager
}

func newRegistry(exporterMetrics bool) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	// Kept whatever the flag: the dashboards take their job and instance
	// variables from it (node_exporter keeps it too).
	reg.MustRegister(versioncollector.NewCollector(exporterName))
	// Kept whatever the flag too: CloudDBDataStale tells a part that has
	// not succeeded yet since a start from one that stopped succeeding.
	start := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "clouddb_exporter_start_time_seconds",
		Help: "Time the exporter started, in Unix seconds.",
	})
	start.SetToCurrentTime()
	reg.MustRegister(start)
	if exporterMetrics {
		reg.MustRegister(
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		)
	}
	return reg
}

// A nil manager has no projects (--config.check).
func adminOptions(manager *projects.Manager, reg prometheus.Registerer, logger *slog.Logger) admin.Options {
	return admin.Options{
		Projects: func(id string) (admin.Project, bool) {
			if manager == nil {
				return admin.Project{}, false
			}
			p, ok := manager.Get(id)
			if !ok {
				return admin.Project{}, false
			}
			return admin.Project{Client: p.Client, Poller: p.Poller, TrackInterval: p.Config.Collect.TransitionInterval}, true
		},
		Registerer: reg,
		Logger:     logger,
	}
}

// projectSource returns the start's loader, for a configuration checkProjects passed:
// its first load returns first, what the check read; later ones (reloads) read again.
func projectSource(ctx context.Context, logger *slog.Logger, f *flags, getenv func(string) string, first []config.Project, apiMetrics *apimetrics.Metrics, reg prometheus.Registerer) (func() ([]config.Project, error), error) {
	switch {
	case f.simulate:
		project, err := startSimulator(ctx, logger, f.config, f.simulateAddress, getenv)
		if err != nil {
			return nil, err
		}
		return func() ([]config.Project, error) { return []config.Project{project}, nil }, nil
	case discovering(f):
		return discoverySource(ctx, logger, f.config, getenv, apiMetrics, reg)
	}
	return func() ([]config.Project, error) {
		if ps := first; ps != nil {
			first = nil
			return ps, nil
		}
		// Read again: a reload picks up a changed file and rotated key files.
		return loadProjects(f, getenv)
	}, nil
}

// reloadSource is what a reload re-reads: "" with --simulate, whose project
// never changes, unless a --pricing.file is given, which a reload re-reads.
func reloadSource(f *flags) string {
	switch {
	case f.simulate:
		return f.pricingFile
	case f.config.ConfigFile != "":
		return f.config.ConfigFile
	case discovering(f):
		return "project discovery"
	default:
		return "the --api.*-file credential files"
	}
}

func reloadFunc(f *flags, r *projects.Reloader) func() error {
	if reloadSource(f) == "" {
		return nil
	}
	return r.Requested
}

func discovering(f *flags) bool {
	return !f.simulate && f.config.ConfigFile == "" && f.config.ProjectID == ""
}

// discoverySource: a failed first discovery starts no project rather than
// stopping the exporter; the next one, a cycle later, tries again.
func discoverySource(ctx context.Context, logger *slog.Logger, cfg *config.Flags, getenv func(string) string, apiMetrics *apimetrics.Metrics, reg prometheus.Registerer) (func() ([]config.Project, error), error) {
	template, err := cfg.DiscoveryTemplate(getenv)
	if err != nil {
		return nil, err
	}
	d, err := projects.NewDiscovery(template, version.ComponentUserAgent(exporterName), apiMetrics.DiscoveryObserver(), logger)
	if err != nil {
		return nil, err
	}
	d.Metrics = projects.NewDiscoveryMetrics(reg)
	first := true
	return func() ([]config.Project, error) {
		lctx, cancel := context.WithTimeout(ctx, template.API.Timeout)
		defer cancel()
		found, err := d.Load(lctx)
		if err != nil && first {
			found, err = nil, nil
		}
		first = false
		return found, err
	}, nil
}

func rediscover(ctx context.Context, r *projects.Reloader, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = r.Rediscover() // a failure is logged and keeps the projects running
		}
	}
}
