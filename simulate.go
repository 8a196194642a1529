package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
)

// startSimulator's credentials are generated afresh and never leave the process.
func startSimulator(ctx context.Context, logger *slog.Logger, f *config.Flags, addr string, getenv func(string) string) (config.Project, error) {
	demo, err := cloudsim.StartDemo(ctx, addr, logger.With("component", "simulator"))
	if err != nil {
		return config.Project{}, fmt.Errorf("--simulate.listen-address (CLOUDDB_SIMULATE_LISTEN_ADDRESS): %w", err)
	}
	logger.Info("Simulator started", "url", demo.URL, "control_url", demo.ControlURL, "project_id", cloudsim.DemoProject)
	api, collect := f.DemoDefaults(getenv)
	api.URL = demo.URL
	return config.Project{
		ID:      cloudsim.DemoProject,
		API:     api,
		Collect: collect,
		Credentials: config.Credentials{
			AccessKey: apiclient.Secret(demo.Credential.AccessKey),
			SecretKey: apiclient.Secret(demo.Credential.SecretKey),
			APIKey:    apiclient.Secret(demo.Credential.APIKey),
			Source:    "the simulator's generated keys",
		},
	}, nil
}
