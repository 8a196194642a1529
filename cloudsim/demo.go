package cloudsim

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Defaults of the demo: the standalone simulator's flags and the exporter's
// --simulate both use them, so that the two demos behave alike.
const (
	// DemoProject is the project the demo scenario is loaded into.
	DemoProject = "demo-project"
	// DemoChurnInterval is how often the exporter's embedded demo changes
	// something, so that graphs move.
	DemoChurnInterval = 30 * time.Second
	// DemoAddress is where the standalone simulator and the exporter's
	// embedded one listen by default, so that the /_sim examples of the docs
	// work against either.
	DemoAddress = "127.0.0.1:8090"
)

// DemoTimings are the state machines' durations of the demo: long enough
// for a poller following transitions every few seconds to see each state.
func DemoTimings() Timings {
	return Timings{
		Provision:  5 * time.Second,
		Configure:  10 * time.Second,
		Delete:     8 * time.Second,
		ReplicaSet: 12 * time.Second,
		Peering:    20 * time.Second,
	}
}

// Demo is a running demo simulator.
type Demo struct {
	// URL is the API's base URL (ending in /v1), ControlURL the base of
	// the /_sim controls.
	URL, ControlURL string
	// Credential is the demo's only credential, generated afresh: it
	// never leaves the process unless the caller hands it out.
	Credential Credential
}

// CheckDemoAddress checks that addr is a loopback host:port: the
// simulator's controls take no authentication.
func CheckDemoAddress(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address: the simulator's controls take no authentication", addr)
	}
	return nil
}

// StartDemo serves a simulator with the demo scenario, DemoTimings and
// churn every DemoChurnInterval on addr until ctx ends. addr must be a
// loopback address: the controls take no authentication.
func StartDemo(ctx context.Context, addr string, logger *slog.Logger) (*Demo, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := CheckDemoAddress(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	cred := Credential{
		Name: "demo", ProjectID: DemoProject,
		AccessKey: rand.Text(), SecretKey: rand.Text(), APIKey: rand.Text(),
	}
	sim := New(Options{Credentials: []Credential{cred}, Timings: DemoTimings(), Seed: 1, Logger: logger})
	sim.LoadDemo(DemoProject)
	go sim.Churn(ctx, DemoChurnInterval)

	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("Simulator stopped", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	base := "http://" + ln.Addr().String()
	return &Demo{URL: base + "/v1", ControlURL: base + "/_sim/", Credential: cred}, nil
}
