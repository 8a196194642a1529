package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// selfSignedCert writes a certificate for 127.0.0.1 and its key to dir and
// returns their paths and a pool that trusts the certificate.
func selfSignedCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "clouddb-admin-test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestAdminTLS runs the admin listener with TLS and basic auth from
// --admin.web-config.file: it answers over HTTPS to the right password
// only, and not at all in clear text.
func TestAdminTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSignedCert(t, dir)
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
	httpsURL := "https://" + strings.TrimPrefix(r.admin, "http://") + "/api/v1/operations"
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
	if code := get(r.admin+"/api/v1/operations", "tls-basic-password"); code == http.StatusOK {
		t.Error("the admin API answered in clear text on a TLS listener")
	}
	if strings.Contains(r.proc.Output(), "tls-basic-password") {
		t.Error("the basic-auth password is in the log")
	}
}
