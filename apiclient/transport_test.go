package apiclient

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Two bursts of --collect.concurrency requests, as two poll cycles make:
// the second reuses the connections of the first instead of opening new
// ones, because the idle pool is sized to the concurrency.
func TestTransportKeepsConcurrencyConnections(t *testing.T) {
	const concurrency = 24
	var opened atomic.Int32
	var inFlight sync.WaitGroup
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// Hold every request until the whole burst is in flight, so that
		// the burst needs concurrency connections at once.
		inFlight.Done()
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	cfg := validConfig()
	cfg.BaseURL = srv.URL + "/v1"
	cfg.Concurrency = concurrency
	cfg.RateLimit = 1e6
	cfg.Burst = 1e6
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	burst := func() {
		inFlight.Add(concurrency)
		release = make(chan struct{})
		var done sync.WaitGroup
		for range concurrency {
			done.Go(func() {
				if _, err := c.ListVPCs(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		inFlight.Wait()
		close(release)
		done.Wait()
	}
	burst()
	first := opened.Load()
	if first != concurrency {
		t.Fatalf("first burst opened %d connections, want %d", first, concurrency)
	}
	burst()
	if n := opened.Load() - first; n != 0 {
		t.Errorf("second burst opened %d new connections: the idle pool does not hold the concurrency", n)
	}
}
