package apiclient

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func validConfig() Config {
	return Config{BaseURL: "https://api.example.net/v1", ProjectID: "p", AccessKey: testAccessKey, SecretKey: testSecretKey, APIKey: testAPIKey}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string // substring; "" means New must succeed
	}{
		{"valid", func(*Config) {}, ""},
		{"valid trailing slash", func(c *Config) { c.BaseURL = "http://localhost:8080/v1/" }, ""},
		{"no api key is fine", func(c *Config) { c.APIKey = "" }, ""},
		{"empty base", func(c *Config) { c.BaseURL = "" }, "BaseURL must not be empty"},
		{"relative", func(c *Config) { c.BaseURL = "/v1" }, "absolute http or https URL"},
		{"ftp", func(c *Config) { c.BaseURL = "ftp://h/v1" }, "absolute http or https URL"},
		{"no host", func(c *Config) { c.BaseURL = "https:///v1" }, "host must not be empty"},
		{"userinfo", func(c *Config) { c.BaseURL = "https://user:hunter2pw@h/v1" }, "user info"},
		{"query", func(c *Config) { c.BaseURL = "https://h/v1?token=x" }, "query"},
		{"fragment", func(c *Config) { c.BaseURL = "https://h/v1#frag" }, "fragment"},
		{"unparsable with password", func(c *Config) { c.BaseURL = "https://user:hunter2pw/x@h:port/v1" }, "not a valid URL"},
		{"empty project", func(c *Config) { c.ProjectID = " " }, "ProjectID"},
		{"empty access key", func(c *Config) { c.AccessKey = "" }, "AccessKey"},
		{"empty secret key", func(c *Config) { c.SecretKey = "" }, "SecretKey"},
		{"negative timeout", func(c *Config) { c.Timeout = -1 }, "negative"},
		{"negative rate", func(c *Config) { c.RateLimit = -1 }, "RateLimit"},
		{"negative burst", func(c *Config) { c.Burst = -1 }, "Burst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig()
			tt.mutate(&cfg)
			c, err := New(cfg)
			if tt.wantErr == "" {
				if err != nil || c == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "hunter2pw") || strings.Contains(err.Error(), "token=x") {
				t.Errorf("error echoes a secret part of the URL: %v", err)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	c, err := New(validConfig())
	if err != nil {
		t.Fatal(err)
	}
	if c.timeout != DefaultTimeout || c.maxRetries != DefaultMaxRetries || c.retryBaseDelay != DefaultRetryBaseDelay ||
		c.retryMaxDelay != DefaultRetryMaxDelay || c.maxRetryAfter != DefaultMaxRetryAfter || c.maxBodyBytes != DefaultMaxBodyBytes {
		t.Errorf("defaults not applied: %+v", *c)
	}
	if float64(c.limiter.Limit()) != DefaultRateLimit || c.limiter.Burst() != 1 {
		t.Errorf("limiter = %v/%d", c.limiter.Limit(), c.limiter.Burst())
	}
	if c.http == nil || c.http.Transport == http.DefaultTransport {
		t.Error("default HTTP client must use its own transport, not share the global one")
	}
	if c.base != "https://api.example.net/v1" || c.ProjectID() != "p" || !c.ReadsAuthInfo() {
		t.Errorf("base = %q project = %q", c.base, c.ProjectID())
	}

	cfg := validConfig()
	cfg.MaxRetries = -1
	cfg.APIKey = ""
	c, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.maxRetries != 0 || !c.ReadsAuthInfo() {
		t.Errorf("MaxRetries<0 gave %d retries; ReadsAuthInfo = %t", c.maxRetries, c.ReadsAuthInfo())
	}
}

// secretsIn returns the test credentials (and the Basic header value) found in s.
func secretsIn(s string) []string {
	var found []string
	for _, secret := range []string{testAccessKey, testSecretKey, testAPIKey, "hunter2pw", "QUt0ZXN0YWNjZXNz"} {
		if strings.Contains(s, secret) {
			found = append(found, secret)
		}
	}
	return found
}

func TestPrintingHidesCredentials(t *testing.T) {
	cfg := validConfig()
	cfg.BaseURL = "https://user:hunter2pw@api.example.net/v1"
	c, err := New(validConfig())
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("Client.", "client", c, "config", cfg)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
		for name, v := range map[string]any{"client": c, "*client": *c, "config": cfg, "&config": &cfg} {
			if out := fmt.Sprintf(verb, v); len(secretsIn(out)) > 0 {
				t.Errorf("fmt %s of %s shows %v: %s", verb, name, secretsIn(out), out)
			}
		}
	}
	if found := secretsIn(logged.String()); len(found) > 0 {
		t.Errorf("slog shows %v: %s", found, logged.String())
	}
	if s := c.String(); !strings.Contains(s, "api.example.net") || !strings.Contains(s, "project_id=p") {
		t.Errorf("String() = %q lacks the base URL or project", s)
	}
	if s := cfg.String(); !strings.Contains(s, "<redacted>") || !strings.Contains(s, "api.example.net") {
		t.Errorf("Config.String() = %q", s)
	}
}

func TestInvalidIDsSendNothing(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, "{}") })
	c, _, _ := newTestClient(t, srv, nil)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"empty service":     func() error { _, err := c.GetService(ctx, ""); return err },
		"blank service":     func() error { return c.DeleteService(ctx, "  ") },
		"dot service":       func() error { return c.DeleteService(ctx, ".") },
		"dotdot vpc":        func() error { return c.DeleteVPC(ctx, "..") },
		"empty replica set": func() error { return c.DeleteReplicaSet(ctx, "s", "") },
		"empty peering":     func() error { _, err := c.GetPeering(ctx, "v", ""); return err },
		"empty vpc":         func() error { _, err := c.ListPeerings(ctx, ""); return err },
	} {
		err := call()
		if !errors.Is(err, ErrInvalidID) {
			t.Errorf("%s: err = %v, want ErrInvalidID", name, err)
		}
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid ids, want 0", n)
	}
}

func TestGetAuthInfoWithoutAPIKeyUsesBasicUntilRefused(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 401, `{"code":"UNAUTHORIZED","message":"this operation takes a Bearer API key"}`)
	})
	c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.APIKey = "" })
	if !c.ReadsAuthInfo() {
		t.Fatal("ReadsAuthInfo is false before Basic was tried")
	}
	if _, err := c.GetAuthInfo(t.Context()); !errors.Is(err, ErrNoAPIKey) {
		t.Fatalf("err = %v, want ErrNoAPIKey", err)
	}
	if reqs := srv.requests(); len(reqs) != 1 || !strings.HasPrefix(reqs[0].Auth, "Basic ") {
		t.Fatalf("requests %+v, want one with Basic", reqs)
	}
	if c.ReadsAuthInfo() {
		t.Error("ReadsAuthInfo still true after Basic was refused")
	}
	if _, err := c.GetAuthInfo(t.Context()); !errors.Is(err, ErrNoAPIKey) || len(srv.requests()) != 1 {
		t.Errorf("second call: err %v, %d requests, want ErrNoAPIKey and no new request", err, len(srv.requests()))
	}
}

func TestProjectIDIsEscaped(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, "[]") })
	c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.ProjectID = "a/b c" })
	if _, err := c.ListVPCs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := srv.requests()[0].URI; got != "/v1/projects/a%2Fb%20c/vpcs" {
		t.Errorf("URI = %q", got)
	}
}

func TestCustomUserAgent(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, "[]") })
	c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.UserAgent = "exporter/9" })
	if _, err := c.ListVPCs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := srv.requests()[0].UserAgent; got != "exporter/9" {
		t.Errorf("User-Agent = %q", got)
	}
}
