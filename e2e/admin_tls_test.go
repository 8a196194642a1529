package e2e

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestAdminTLS runs the admin listener with TLS and basic auth from
// --admin.web-config.file: it answers over HTTPS to the right password
// only, and not at all in clear text.
func TestAdminTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile, pool := testbin.SelfSignedCert(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("tls-basic-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(dir, "admin-web.yml")
	content := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  ops: %s\n", certFile, keyFile, hash)
	if err := os.WriteFile(webConfig, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startAdmin(t, nil, "--admin.web-config.file="+webConfig)
	httpsURL := "https://" + strings.TrimPrefix(r.AdminURL, "http://") + "/api/v1/operations"
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	get := func(url, password string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("ops", password)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(httpsURL, "tls-basic-password"); code != http.StatusOK {
		t.Errorf("HTTPS with the right password: %d, want 200", code)
	}
	if code := get(httpsURL, "wrong"); code != http.StatusUnauthorized {
		t.Errorf("HTTPS with a wrong password: %d, want 401", code)
	}
	// In clear text the listener does not serve the API (Go's TLS server
	// answers a plain HTTP request with 400 and nothing else).
	if code := get(r.AdminURL+"/api/v1/operations", "tls-basic-password"); code == http.StatusOK {
		t.Error("the admin API answered in clear text on a TLS listener")
	}
	if strings.Contains(r.Output(), "tls-basic-password") {
		t.Error("the basic-auth password is in the log")
	}
}
