package config

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// writePEM writes blocks of one type to dir/name and returns the path.
func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// clientCert returns a self-signed client certificate and its key, written
// to dir as client.crt and client.key.
func clientCert(t *testing.T, dir string) (*x509.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "clouddb-exporter"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return cert, writePEM(t, dir, "client.crt", "CERTIFICATE", der), writePEM(t, dir, "client.key", "PRIVATE KEY", keyDER)
}

// mTLSServer is an API answering the list of VPCs over TLS with its own CA
// (httptest's certificate, valid for 127.0.0.1 and example.com), requiring
// a client certificate signed by clientCA.
func mTLSServer(t *testing.T, clientCA *x509.Certificate) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	pool := x509.NewCertPool()
	pool.AddCert(clientCA)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := writePEM(t, t.TempDir(), "ca.crt", "CERTIFICATE", srv.Certificate().Raw)
	return srv, ca
}

func listVPCs(t *testing.T, p Project) error {
	t.Helper()
	cfg, err := p.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxRetries = -1
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.ListVPCs(ctx)
	return err
}

// TestHTTPClientTLS runs the client built from a config file's http_client
// against a TLS server with a custom CA that requires a client certificate.
func TestHTTPClientTLS(t *testing.T) {
	dir := t.TempDir()
	cert, certFile, keyFile := clientCert(t, dir)
	srv, caFile := mTLSServer(t, cert)
	keys := filepath.Join(dir, "access_key")
	if err := os.WriteFile(keys, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	project := func(t *testing.T, httpClient string) (Project, error) {
		t.Helper()
		file := "projects:\n  - id: p1\n    api_url: " + srv.URL + "/v1\n    access_key_file: " + keys + "\n    secret_key_file: " + keys + "\n" + httpClient
		ps, err := parse([]byte(file), "", API{Timeout: 5 * time.Second, RateLimit: 100, Burst: 1}, Collect{Interval: time.Minute, TransitionInterval: time.Second, MaxStaleness: time.Hour, Concurrency: 1}, os.Getenv)
		if err != nil {
			return Project{}, err
		}
		return ps[0], nil
	}
	for _, tc := range []struct {
		name, httpClient, wantErr string
	}{
		{"CA and client certificate", "    http_client:\n      tls_config: {ca_file: " + caFile + ", cert_file: " + certFile + ", key_file: " + keyFile + "}\n", ""},
		{"server name in the certificate", "    http_client:\n      tls_config: {ca_file: " + caFile + ", cert_file: " + certFile + ", key_file: " + keyFile + ", server_name: example.com}\n", ""},
		{"insecure_skip_verify", "    http_client:\n      tls_config: {insecure_skip_verify: true, cert_file: " + certFile + ", key_file: " + keyFile + "}\n", ""},
		{"no CA", "    http_client:\n      tls_config: {cert_file: " + certFile + ", key_file: " + keyFile + "}\n", "certificate"},
		{"no client certificate", "    http_client:\n      tls_config: {ca_file: " + caFile + "}\n", "certificate"},
		{"wrong server name", "    http_client:\n      tls_config: {ca_file: " + caFile + ", cert_file: " + certFile + ", key_file: " + keyFile + ", server_name: other.example}\n", "other.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := project(t, tc.httpClient)
			if err != nil {
				t.Fatal(err)
			}
			err = listVPCs(t, p)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ListVPCs: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("ListVPCs: %v, want an error about %q", err, tc.wantErr)
			}
		})
	}

	// Configuration errors name the setting, before any request.
	for _, tc := range []struct{ httpClient, want string }{
		{"    http_client:\n      tls_config: {ca_file: " + filepath.Join(dir, "missing.crt") + "}\n", "projects[0].http_client"},
		{"    http_client:\n      tls_config: {cert_file: " + certFile + "}\n", "key_file"},
		{"    http_client:\n      tls_config: {cert_file: " + certFile + ", key_file: " + caFile + "}\n", "projects[0].http_client"},
		{"    http_client:\n      basic_auth: {username: u}\n", "basic_auth"},
		{"    http_client:\n      proxy_url: ftp://proxy.example\n", "scheme"},
		{"    http_client:\n      proxy_url: http://proxy.example\n      proxy_connect_header: {X: [y]}\n", "proxy_connect_header"},
		{"    http_client:\n      proxy_url: http://user:hunter2@proxy.example\n", "must not carry credentials"},
	} {
		if _, err := project(t, tc.httpClient); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("http_client %q: error %v, want one naming %q", tc.httpClient, err, tc.want)
		}
	}
}

// TestHTTPClientRelativePaths checks that a file's relative tls_config
// paths are relative to the file, as in Prometheus' own configuration.
func TestHTTPClientRelativePaths(t *testing.T) {
	dir := t.TempDir()
	cert, _, _ := clientCert(t, dir)
	srv, caFile := mTLSServer(t, cert)
	if err := os.Rename(caFile, filepath.Join(dir, "ca.crt")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"access_key", "secret_key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("k"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "config.yml")
	file := "projects:\n  - id: p1\n    api_url: " + srv.URL + "/v1\n    access_key_file: " + filepath.Join(dir, "access_key") + "\n    secret_key_file: " + filepath.Join(dir, "secret_key") +
		"\n    http_client:\n      tls_config: {ca_file: ca.crt, cert_file: client.crt, key_file: client.key}\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	ps, err := LoadFile(path, API{Timeout: 5 * time.Second, RateLimit: 100, Burst: 1}, Collect{Interval: time.Minute, TransitionInterval: time.Second, MaxStaleness: time.Hour, Concurrency: 1}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := listVPCs(t, ps[0]); err != nil {
		t.Errorf("ListVPCs: %v", err)
	}
	// Equal files give equal projects: a reload keeps the poller running.
	again, err := LoadFile(path, API{Timeout: 5 * time.Second, RateLimit: 100, Burst: 1}, Collect{Interval: time.Minute, TransitionInterval: time.Second, MaxStaleness: time.Hour, Concurrency: 1}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps[0].ClientConfig(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ps[0], again[0]) {
		t.Error("loading the same file twice gives different projects")
	}
}

// TestHTTPClientFlags drives the single-project flags: the CA, client
// certificate and proxy flags reach the client.
func TestHTTPClientFlags(t *testing.T) {
	dir := t.TempDir()
	cert, certFile, keyFile := clientCert(t, dir)
	srv, caFile := mTLSServer(t, cert)
	parse := func(t *testing.T, args ...string) (Project, error) {
		t.Helper()
		app := kingpin.New("test", "")
		f := AddFlags(app)
		if _, err := app.Parse(append([]string{"--api.url=" + srv.URL + "/v1", "--api.project-id=p1"}, args...)); err != nil {
			t.Fatal(err)
		}
		return f.SingleProject(env(map[string]string{EnvAccessKey: "a", EnvSecretKey: "s"}))
	}
	p, err := parse(t, "--api.tls.ca-file="+caFile, "--api.tls.cert-file="+certFile, "--api.tls.key-file="+keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := listVPCs(t, p); err != nil {
		t.Errorf("with the TLS flags: %v", err)
	}
	if _, err := parse(t, "--api.tls.ca-file="+filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "--api.tls.") {
		t.Errorf("a missing CA file: %v, want an error naming the flags", err)
	}

	// A plain-HTTP API reached through --api.proxy-url: the proxy sees the
	// request (absolute URL) and answers it.
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Host == "api.internal.example" {
			proxied.Add(1)
		}
		_, _ = w.Write([]byte("[]"))
	}))
	defer proxy.Close()
	app := kingpin.New("test", "")
	f := AddFlags(app)
	if _, err := app.Parse([]string{"--api.url=http://api.internal.example/v1", "--api.project-id=p1", "--api.proxy-url=" + proxy.URL}); err != nil {
		t.Fatal(err)
	}
	p, err = f.SingleProject(env(map[string]string{EnvAccessKey: "a", EnvSecretKey: "s"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := listVPCs(t, p); err != nil || proxied.Load() != 1 {
		t.Errorf("through the proxy: %v, proxy saw %d requests for the API host", err, proxied.Load())
	}
}
