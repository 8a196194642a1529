package main

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
)

// simulatedProject is the project id of the embedded demo.
const simulatedProject = "demo-project"

// startSimulator serves the embedded simulator with the demo scenario on a
// free loopback port until ctx ends, and returns the project that polls it.
// Its credentials are generated afresh and never leave the process.
func startSimulator(ctx context.Context, logger *slog.Logger, f *config.Flags) (config.Project, error) {
	creds := cloudsim.Credential{
		Name:      "demo",
		ProjectID: simulatedProject,
		AccessKey: rand.Text(),
		SecretKey: rand.Text(),
		APIKey:    rand.Text(),
	}
	sim := cloudsim.New(cloudsim.Options{
		Credentials: []cloudsim.Credential{creds},
		Timings: cloudsim.Timings{
			Provision:  15 * time.Second,
			Configure:  20 * time.Second,
			Delete:     15 * time.Second,
			ReplicaSet: 20 * time.Second,
			Peering:    30 * time.Second,
		},
		Seed:   1,
		Logger: logger.With("component", "simulator"),
	})
	sim.LoadDemo(simulatedProject)
	go sim.Churn(ctx, 30*time.Second)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return config.Project{}, err
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("Simulator stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	url := "http://" + ln.Addr().String() + "/v1"
	logger.Info("Simulator started", "url", url, "project_id", simulatedProject,
		"controls", "http://"+ln.Addr().String()+"/_sim/")

	api, collect := f.Defaults()
	api.URL = url
	return config.Project{
		ID:      simulatedProject,
		API:     api,
		Collect: collect,
		Credentials: config.Credentials{
			AccessKey: apiclient.Secret(creds.AccessKey),
			SecretKey: apiclient.Secret(creds.SecretKey),
			APIKey:    apiclient.Secret(creds.APIKey),
		},
	}, nil
}
