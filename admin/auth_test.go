package admin

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

func TestLoadWebConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Relative TLS paths are resolved against the file's directory, as
	// exporter-toolkit does; users are kept for the admin surface.
	wc, err := LoadWebConfig(write("users.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: /abs/server.key\nbasic_auth_users:\n  alice: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := wc.TLSConfig.TLSCertPath; got != filepath.Join(dir, "server.crt") {
		t.Errorf("cert_file = %q, want it resolved against %s", got, dir)
	}
	if got := wc.TLSConfig.TLSKeyPath; got != "/abs/server.key" {
		t.Errorf("key_file = %q, want the absolute path kept", got)
	}
	if u := users(wc); u["alice"] == "" || len(u) != 1 {
		t.Errorf("users = %v", u)
	}
	if !wc.HTTPConfig.HTTP2 || wc.TLSConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("the toolkit's defaults are missing: %+v", wc)
	}
	if _, err := LoadWebConfig(write("bad.yml", "basic_auth_users: [a]\n")); err == nil {
		t.Error("a list of users was accepted")
	}
	if _, err := LoadWebConfig(write("typo.yml", "tls_server_conf: {}\n")); err == nil {
		t.Error("an unknown key was accepted")
	}
}

// TestListenerWritesNoFile serves the admin listener with TLS, basic-auth
// users and a response header from its web configuration while the
// temporary directory does not exist, as with the shipped Deployment's
// read-only root filesystem.
func TestListenerWritesNoFile(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := testbin.SelfSignedCert(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw-for-ops"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(dir, "web.yml")
	content := "tls_server_config:\n  cert_file: " + filepath.Base(certFile) + "\n  key_file: " + keyFile +
		"\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\nbasic_auth_users:\n  ops: " + string(hash) + "\n"
	if err := os.WriteFile(webConfig, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(dir, "does-not-exist"))
	before, _ := os.ReadDir(dir)

	addr := testbin.FreeAddr(t)
	f := &Flags{listen: addr, webConfig: webConfig, operationTimeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, cleanup, err := f.Listener(ctx, Options{Projects: func(string) (Project, bool) { return Project{}, false }, Logger: slog.New(slog.DiscardHandler)}, false, nil)
	if err != nil {
		t.Fatalf("Listener: %v", err)
	}
	defer cleanup()
	done := make(chan error, 1)
	go func() { done <- l.Serve(slog.New(slog.DiscardHandler)) }()
	defer func() {
		_ = l.Shutdown(context.Background())
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	}()

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(password string) *http.Response {
		t.Helper()
		var resp *http.Response
		testbin.WaitFor(t, 10*time.Second, "the admin listener", func() bool {
			req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/api/v1/operations", nil)
			req.SetBasicAuth("ops", password)
			var err error
			resp, err = client.Do(req)
			return err == nil
		})
		resp.Body.Close()
		return resp
	}
	if resp := get("pw-for-ops"); resp.StatusCode != http.StatusOK || resp.Header.Get("X-Frame-Options") != "deny" {
		t.Errorf("right password: %d, X-Frame-Options %q; want 200 with the configured header", resp.StatusCode, resp.Header.Get("X-Frame-Options"))
	}
	if resp := get("wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", resp.StatusCode)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("files were written: %d entries before, %d after", len(before), len(after))
	}
}
