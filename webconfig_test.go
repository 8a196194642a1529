package main

import (
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/clouddb/clouddb_exporter/changes"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// The change feed is served on the main listener behind --web.config.file,
// as /metrics is: without the password, neither answers.
func TestFeedBehindTheWebConfig(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("feed-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(webConfig, []byte("basic_auth_users:\n  ops: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tl := changes.New(changes.Options{})
	mux := newMux(routes{
		telemetryPath: "/metrics", metrics: http.NotFoundHandler(), notReady: func() string { return "" },
		reload: http.NotFoundHandler(), snapshots: func() []*fleet.Snapshot { return nil },
		dataPlane: func(string, string) bool { return false }, changes: tl.Handler(), latestChanges: tl.Latest,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	systemd := false
	go func() {
		_ = serveMain(srv, []net.Listener{ln}, &web.FlagConfig{WebSystemdSocket: &systemd, WebConfigFile: &webConfig}, 0, slog.New(slog.DiscardHandler))
	}()
	defer func() { _ = srv.Close() }()

	get := func(user, password string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/api/v1/changes", nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		user, password string
		want           int
	}{
		{"", "", http.StatusUnauthorized},
		{"ops", "wrong", http.StatusUnauthorized},
		{"ops", "feed-password", http.StatusOK},
	} {
		if got := get(tc.user, tc.password); got != tc.want {
			t.Errorf("GET /api/v1/changes as %q/%q: %d, want %d", tc.user, tc.password, got, tc.want)
		}
	}
}
