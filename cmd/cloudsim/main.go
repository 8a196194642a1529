// Command cloudsim serves the simulated cloud database API of package
// cloudsim. Its default credentials are public and its /_sim controls
// unauthenticated: keep it on loopback.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/lmittmann/tint"

	"github.com/clouddb/clouddb_exporter/cloudsim"
)

func main() { os.Exit(run()) }

func run() int {
	app := kingpin.New("cloudsim", "Simulated cloud database management API, for demos and tests. Not a real service: keep it on loopback.")
	demo := cloudsim.DemoTimings()
	var (
		listen   = app.Flag("web.listen-address", "Address to listen on. The /_sim controls take no authentication, so keep this on loopback.").Default(cloudsim.DemoAddress).String()
		scenario = app.Flag("scenario", "Resources to load at startup: demo, fleet or empty.").Default("demo").Enum("demo", "fleet", "empty")
		project  = app.Flag("project-id", "Project the credentials belong to and the scenario is loaded into.").Default(cloudsim.DemoProject).String()
		revision = app.Flag("api.revision", "API revision to serve: 2026 (what real accounts answer today) or 2024 (the API as first published).").Default(cloudsim.Revision2026).Enum(cloudsim.Revision2026, cloudsim.Revision2024)
		extra    = app.Flag("extra-project-id", "Another project the credentials can access, loaded with the same scenario (repeatable). The credentials become a user's: GET /projects lists every project and /auth/info answers oauth (revision 2026).").Strings()
		seed     = app.Flag("seed", "Seed for identifiers, ports, fault rates and churn.").Default("1").Int64()

		fleetServices = app.Flag("fleet.services", "Services of the fleet scenario.").Default("1000").Int()
		fleetRS       = app.Flag("fleet.replica-sets-per-service", "Replica sets per service of the fleet scenario.").Default("1").Int()
		fleetVPCs     = app.Flag("fleet.vpcs", "VPCs of the fleet scenario.").Default("10").Int()
		fleetPeerings = app.Flag("fleet.peerings-per-vpc", "Peerings per VPC of the fleet scenario.").Default("2").Int()

		provision = app.Flag("timing.provision", "Duration of each creation step of a service (QUEUED, then CONFIGURING).").Default(demo.Provision.String()).Duration()
		configure = app.Flag("timing.configure", "How long resize, setHA, attach and detach stay CONFIGURING.").Default(demo.Configure.String()).Duration()
		deletion  = app.Flag("timing.delete", "How long a deleted service stays DELETING.").Default(demo.Delete.String()).Duration()
		rsTiming  = app.Flag("timing.replica-set", "How long a replica set is creating, resizing or deleting.").Default(demo.ReplicaSet.String()).Duration()
		peering   = app.Flag("timing.peering", "How long a new peering stays pending.").Default(demo.Peering.String()).Duration()

		churn     = app.Flag("churn.interval", "Interval of demo churn (resizes, pooler toggles, environment flips, status blips); 0 disables it.").Default("0s").Duration()
		clockSkew = app.Flag("clock-skew", "How far the simulated provider's clock is from this machine's (negative: behind): log entries, usage buckets and the Date header of every answer are off by as much.").Default("0s").Duration()
		logLevel  = app.Flag("log.level", "Only log messages with the given severity or above: debug, info, warn, error.").Default("info").Enum("debug", "info", "warn", "error")
	)
	// Keys only from the environment: out of shell history and process lists.
	accessKey := envOr("CLOUDSIM_ACCESS_KEY", "demo-access-key")
	secretKey := envOr("CLOUDSIM_SECRET_KEY", "demo-secret-key")
	apiKey := envOr("CLOUDSIM_API_KEY", "demo-api-key")

	if _, err := app.Parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	logger := newLogger(*logLevel)

	cred := cloudsim.Credential{
		AccessKey: accessKey, SecretKey: secretKey, APIKey: apiKey,
		ProjectID: *project, Name: "cloudsim-demo",
	}
	projects := append([]string{*project}, *extra...)
	if len(*extra) > 0 {
		cred.ProjectID, cred.Projects = "", projects
	}
	sim := cloudsim.New(cloudsim.Options{
		Credentials: []cloudsim.Credential{cred},
		Revision:    *revision,
		Timings: cloudsim.Timings{
			Provision: *provision, Configure: *configure, Delete: *deletion,
			ReplicaSet: *rsTiming, Peering: *peering,
		},
		Seed:      *seed,
		ClockSkew: *clockSkew,
		Logger:    logger,
	})
	for _, p := range projects {
		switch *scenario {
		case "demo":
			sim.LoadDemo(p)
		case "fleet":
			sim.LoadFleet(p, cloudsim.Fleet{
				Services: *fleetServices, ReplicaSetsPerService: *fleetRS,
				VPCs: *fleetVPCs, PeeringsPerVPC: *fleetPeerings,
			})
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Error("Cannot listen", "address", *listen, "err", err)
		return 1
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		logger.Warn("Listening beyond loopback: the /_sim controls take no authentication", "address", ln.Addr().String())
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go sim.Churn(ctx, *churn)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("Serving simulated cloud API", "address", ln.Addr().String(),
		"base_url", "http://"+ln.Addr().String()+"/v1", "scenario", *scenario, "project_id", *project, "api_revision", *revision)

	select {
	case err := <-errc:
		logger.Error("Server failed", "err", err)
		return 1
	case <-ctx.Done():
	}
	logger.Info("Shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Error("Shutdown failed", "err", err)
		return 1
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("Server failed", "err", err)
		return 1
	}
	return 0
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func newLogger(level string) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level)) // kingpin's Enum already checked it.
	fi, err := os.Stderr.Stat()
	tty := err == nil && fi.Mode()&os.ModeCharDevice != 0
	return slog.New(tint.NewTextHandler(os.Stderr, &tint.Options{Level: lvl, NoColor: !tty, TimeFormat: time.RFC3339}))
}
