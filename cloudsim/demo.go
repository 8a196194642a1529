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

// Demo defaults, shared by the standalone simulator and --simulate.
const (
	DemoProject = "demo-project"
	// DemoChurnInterval is how often the demo changes something.
	DemoChurnInterval = 30 * time.Second
	// DemoAddress is shared so the docs' /_sim examples work against either.
	DemoAddress = "127.0.0.1:8090"
)

// DemoTimings let a poller following transitions every few seconds see each state.
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
	// URL ends in /v1; ControlURL is the base of the /_sim controls.
	URL, ControlURL string
	// Credential is generated afresh and never leaves the process unless handed out.
	Credential Credential
}

// CheckDemoAddress checks that addr is loopback: the controls take no authentication.
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

// StartDemo serves the demo scenario with churn on loopback addr until ctx ends.
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
	go sim.RunTimeline(ctx, cred, DemoTimelineSteps(), DemoTimelineRound)

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
